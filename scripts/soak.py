"""Soak test: run the live demo with recording and events, sample RSS, FDs and threads every second, judge the trend.
The judgement here is shared: scripts/soak_serve.py (the service soak) samples `barscope serve` and judges with it.

Memory is judged by its slope over the last half of the run (never earlier than the warm-up), in MB per minute,
which must stay under SLOPE_LIMIT: a leak of 4.4 MB in 2 minutes (2.2 MB/min, the one docs/decisions.md tells of) fails.
Resident memory of the 1080p run moves in steps of 7.9 MB (one BGRx frame, 1920 x 1080 x 4 bytes) as frame buffers
are taken and given back, and a step can last for seconds: a least-squares line through the raw samples read
+2.1 MB/min on a clean tree whose baseline rose 0.2 MB/min. So the line is fitted to the baseline, not to the steps:
the lower envelope (at each sample, the 3rd lowest of the last 20 s: above a dip of one or two samples, below a
frame held for up to 17 s), and the slope is the median of the slopes between its samples 10 s or more apart
(Theil-Sen), which a step that outlasts the envelope's window moves far less than least squares would.
A step that lasts to the end still reads as growth (CI, 2026-12-02: one 8.8-MB step at 120 s of 180, flat after,
read +8.4 MB/min; the same tree's next run +0.06). So a run over the limit at its end is sampled for EXTRA seconds
more and judged again over its new last half: a leak goes on growing, a pool that took one more frame and kept it
does not.
Descriptors and threads are judged flat when the most of them in the run's last half is at most FLAT_BOUND above
the most in its first half after the warm-up (maxima, not single samples: the service's short-lived instances come and
go every 20 s, and each half holds several of them); a leak of one descriptor or thread per 20 s (4.5 in 90 s) fails.
    python3 scripts/soak.py BARSCOPE MINUTES
    python3 scripts/soak.py --judge SAMPLES.tsv [MB_PER_MINUTE] [--fds PER_MINUTE] [--threads PER_MINUTE]
        the judgement again on a run's samples (the limit the run was judged by is in the file's first line), with
        a leak added: that many MB a minute, descriptors or threads a minute (whole ones, as a leak would). A leak
        of 2.2 MB, 3 descriptors or 3 threads a minute must fail; scripts/test and ScriptsTests check it.
"""
import os, statistics, subprocess, sys, tempfile, time

SLOPE_LIMIT = 1.0  # MB per minute over the judged samples
WARM_UP = 30  # seconds: the encoder's and the pools' buffers fill
EVERY = 1.0  # seconds between samples
ENVELOPE_WINDOW, ENVELOPE_RANK = 20.0, 3  # the baseline: the 3rd lowest rss of the last 20 s
EXTRA = 90.0  # seconds more for a run over the limit at its end
FLAT_BOUND = 2  # descriptors or threads: the last half's most may exceed the first half's by this many



def run(tool, minutes):
    """Runs the soak; returns its samples (seconds, rss MB, fds, threads) and barscope's exit status."""
    work = tempfile.mkdtemp(prefix="barscope-soak-")
    events = os.path.join(work, "events.jsonl")
    cmd = [tool, "run", "demo", "--live", "--frames", "0", "--size", "1920x1080", "--record",
           os.path.join(work, "soak.mkv"), "--segment", "60", "--events", events, "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def extend():
        nonlocal until
        until += EXTRA
        print(f"soak: slope over the limit at {minutes:g} min; {EXTRA:.0f} s more, judged again", flush=True)
        return True

    samples = []
    start = time.time()
    until = minutes * 60
    try:
        while time.time() - start < until or (until == minutes * 60 and over_limit(samples) and extend()):
            time.sleep(EVERY)  # the sampling interval of the figures, not a wait
            if proc.poll() is not None:
                sys.exit(f"soak: barscope ended early ({proc.returncode}): {proc.stderr.read().decode()[-300:]}")
            rss = next(int(l.split()[1]) for l in open(f"/proc/{proc.pid}/status") if l.startswith("VmRSS")) / 1024
            fds = len(os.listdir(f"/proc/{proc.pid}/fd"))
            threads = len(os.listdir(f"/proc/{proc.pid}/task"))
            samples.append((time.time() - start, rss, fds, threads))
            if len(samples) % 10 == 0:
                print(f"soak: {samples[-1][0]:6.0f} s  rss {rss:7.1f} MB  fds {fds}  threads {threads}", flush=True)
    finally:
        proc.send_signal(2)  # SIGINT: finish the recording
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    # Every sample, for a closer look (or for --judge).
    path = os.path.join(work, "samples.tsv")
    write_samples(path, samples, "demo", SLOPE_LIMIT)
    print(f"soak: samples in {path}")
    return samples, proc.returncode


def over_limit(samples, limit=SLOPE_LIMIT):
    """Whether the memory judged on these samples (as `judge` does) grew faster than the limit."""
    since = max(WARM_UP, samples[-1][0] / 2) if samples else 0
    judged = envelope([(s[0], s[1]) for s in samples], since)
    return len(judged) >= 20 and slope_per_minute(judged) > limit


def envelope(points, since, window=ENVELOPE_WINDOW, rank=ENVELOPE_RANK):
    """The samples from `since` on, each replaced by the rank-th lowest rss of the `window` seconds up to it."""
    out = []
    for t, _ in points:
        if t >= since:
            recent = sorted(r for u, r in points if t - window < u <= t)
            out.append((t, recent[min(rank, len(recent)) - 1]))
    return out


def slope_per_minute(points, apart=10.0):
    """Theil-Sen: the median of the slopes between samples `apart` seconds or more apart, in MB per minute."""
    slopes = [(r2 - r1) / (t2 - t1) for i, (t1, r1) in enumerate(points) for t2, r2 in points[i + 1:]
              if t2 - t1 >= apart]
    return 60 * statistics.median(slopes) if slopes else 0.0


def verdict(samples, limit=SLOPE_LIMIT):
    """The judgement of a run's samples (seconds, rss MB, fds[, threads]): (figures, breaches). Memory: the slope
    of its baseline over the last half (never before the warm-up); descriptors and threads: the last half's most
    against the first half's most after the warm-up, within FLAT_BOUND. No breaches: it passes."""
    if not samples:
        return {}, ["no samples"]
    half = max(WARM_UP, samples[-1][0] / 2)
    judged = envelope([(s[0], s[1]) for s in samples], half)
    if len(judged) < 20:
        return {}, [f"{len(judged)} samples to judge; run for longer"]
    figures = {"rss_start": samples[0][1], "rss_end": samples[-1][1], "baseline_start": judged[0][1],
               "baseline_end": judged[-1][1], "slope": slope_per_minute(judged), "limit": limit,
               "from": judged[0][0], "to": judged[-1][0], "judged": len(judged)}
    breaches = []
    if figures["slope"] > limit:
        breaches.append(f"memory grew {figures['slope']:+.2f} MB/min over {figures['from']:.0f}-{figures['to']:.0f} s "
                        f"(limit {limit:g})")
    for name, column in (("fds", 2), ("threads", 3)):
        if len(samples[0]) <= column:
            continue
        early = [s[column] for s in samples if WARM_UP <= s[0] < half]
        late = [s[column] for s in samples if s[0] >= half]
        figures[name] = (samples[0][column], max(early or late), max(late), samples[-1][column])
        if max(late) > max(early or late) + FLAT_BOUND:
            breaches.append(f"{name} grew: at most {max(early or late)} in {WARM_UP:.0f}-{half:.0f} s, "
                            f"{max(late)} after (bound +{FLAT_BOUND})")
    return figures, breaches


def describe(figures):
    """The verdict's figures on one line."""
    line = (f"rss {figures['rss_start']:.1f} -> {figures['rss_end']:.1f} MB (baseline {figures['baseline_start']:.1f} "
            f"-> {figures['baseline_end']:.1f}), slope {figures['slope']:+.2f} MB/min over {figures['from']:.0f}-"
            f"{figures['to']:.0f} s ({figures['judged']} samples, limit {figures['limit']:g})")
    for name in ("fds", "threads"):
        if name in figures:
            first, early, late, last = figures[name]
            line += f", {name} {first} -> {last} (most {early} in the first half, {late} in the last)"
    return line


def write_samples(path, samples, mode, limit):
    """Every sample, for a closer look or for --judge; the first line names the run and its limit."""
    with open(path, "w") as f:
        f.write(f"# barscope soak {mode}: limit {limit:g} MB/min; seconds, rss MB, fds, threads\n")
        f.writelines("\t".join(f"{v:.1f}" if i == 0 else f"{v:.2f}" if i == 1 else str(v) for i, v in enumerate(s))
                     + "\n" for s in samples)


def read_samples(path):
    """The samples and the limit of a samples file (an old one, without its first line: the demo's limit)."""
    limit, samples = SLOPE_LIMIT, []
    for line in open(path):
        if line.startswith("#"):
            if "limit " in line:
                limit = float(line.split("limit ")[1].split()[0])
            continue
        cols = line.split()
        samples.append(tuple([float(cols[0]), float(cols[1])] + [int(c) for c in cols[2:]]))
    return samples, limit


def judge(samples, minutes, status):
    """Prints the verdict on a demo run's samples; True when memory, descriptors and threads stayed flat and it
    stopped cleanly."""
    figures, breaches = verdict(samples)
    if figures:
        print(f"soak: {minutes:g} min, {describe(figures)}, exit {status}")
    for b in breaches:
        print(f"soak: {b}")
    return not breaches and status == 130


def rejudge(argv):
    """--judge SAMPLES.tsv [MB_PER_MINUTE] [--fds N] [--threads N]: exits 0 when the samples (leak added) pass."""
    path, rest = argv[0], argv[1:]
    leak = {"rss": 0.0, "--fds": 0.0, "--threads": 0.0}
    while rest:
        if rest[0] in ("--fds", "--threads"):
            leak[rest[0]] = float(rest[1])
            rest = rest[2:]
        else:
            leak["rss"] = float(rest[0])
            rest = rest[1:]
    samples, limit = read_samples(path)
    grown = []
    for s in samples:
        t = s[0]
        row = [t, s[1] + leak["rss"] * t / 60]
        for column, key in ((2, "--fds"), (3, "--threads")):
            if len(s) > column:
                row.append(s[column] + int(leak[key] * t / 60))
        grown.append(tuple(row))
    figures, breaches = verdict(grown, limit)
    added = f"leak added: {leak['rss']:g} MB, {leak['--fds']:g} fds, {leak['--threads']:g} threads a minute"
    if figures:
        print(f"soak --judge: {describe(figures)}; {added}")
    if breaches:
        sys.exit("soak --judge: FAIL: " + "; ".join(breaches))
    print("soak --judge: PASS")


if __name__ == "__main__":
    if sys.argv[1] == "--judge":
        rejudge(sys.argv[2:])
        sys.exit(0)
    minutes = float(sys.argv[2])
    samples, status = run(sys.argv[1], minutes)
    if not judge(samples, minutes, status):
        sys.exit("soak: memory grew (slope over the limit), descriptors or threads grew, or the run did not stop "
                 "cleanly")
