# Sourced by the scripts: the toolchain on PATH and the repository root as the working folder.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
