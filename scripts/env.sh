# Sourced by the scripts: the toolchain on PATH and the repository root as the working folder.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"

# Builds with `swift build ARGS` quietly: one line before a first build (nothing when the build is up to date), the
# build's whole log only when it fails, and never SwiftPM's pkg-config noise ("warning: prohibited flag(s):
# -pthread" for each of GStreamer's modules, hundreds of lines that say nothing to a user).
#   quiet_build "barscope" -c release --product barscope
quiet_build() {
    local what="$1"
    shift
    local log
    log=$(mktemp)
    local config=debug
    [[ " $* " == *" -c release "* ]] && config=release
    local first=""
    if [ ! -d "$root/.build/$config" ]; then
        echo "building $what (first run, a few minutes)..." >&2
        first=yes
    fi
    (cd "$root" && swift build "$@") >"$log" 2>&1 &
    local build=$! ticks=0 status=0
    # A rebuild after a change says so once it has taken 10 s (an up-to-date build says nothing).
    while kill -0 "$build" 2>/dev/null; do
        sleep 0.1
        ticks=$((ticks + 1))
        if [ "$ticks" -eq 100 ] && [ -z "$first" ]; then echo "building $what..." >&2; fi
    done
    wait "$build" || status=$?
    if [ "$status" -ne 0 ]; then
        grep -v -e "warning: prohibited flag" -e "^warning: 'pkg-config'" "$log" >&2 || true
        rm -f "$log"
        echo "$(basename "$0"): the build of $what failed (its log is above)" >&2
        return 1
    fi
    rm -f "$log"
}
