"""Soak test: run the live demo with recording and events, sample RSS and FDs every second, judge the trend.

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
    python3 scripts/soak.py BARSCOPE MINUTES
    python3 scripts/soak.py --judge SAMPLES.tsv [MB_PER_MINUTE]   the judgement again on a run's samples (with a
                                                                  leak of that many MB a minute added: it must fail)
"""
import os, statistics, subprocess, sys, tempfile, time

SLOPE_LIMIT = 1.0  # MB per minute over the judged samples
WARM_UP = 30  # seconds: the encoder's and the pools' buffers fill
EVERY = 1.0  # seconds between samples
ENVELOPE_WINDOW, ENVELOPE_RANK = 20.0, 3  # the baseline: the 3rd lowest rss of the last 20 s
EXTRA = 90.0  # seconds more for a run over the limit at its end



def run(tool, minutes):
    """Runs the soak; returns its samples (seconds, rss MB, fds) and barscope's exit status."""
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
            samples.append((time.time() - start, rss, fds))
            if len(samples) % 10 == 0:
                print(f"soak: {samples[-1][0]:6.0f} s  rss {rss:7.1f} MB  fds {fds}", flush=True)
    finally:
        proc.send_signal(2)  # SIGINT: finish the recording
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    # Every sample, for a closer look (or for --judge).
    path = os.path.join(work, "samples.tsv")
    with open(path, "w") as f:
        f.writelines(f"{t:.1f}\t{r:.2f}\t{n}\n" for t, r, n in samples)
    print(f"soak: samples in {path}")
    return samples, proc.returncode


def over_limit(samples):
    """Whether the memory judged on these samples (as `judge` does) grew faster than the limit."""
    since = max(WARM_UP, samples[-1][0] / 2) if samples else 0
    judged = envelope([(t, r) for t, r, _ in samples], since)
    return len(judged) >= 20 and slope_per_minute(judged) > SLOPE_LIMIT


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


def judge(samples, minutes, status):
    """Prints the verdict on a run's samples; True when memory and descriptors stayed flat and it stopped cleanly."""
    since = max(WARM_UP, samples[-1][0] / 2) if samples else 0
    judged = envelope([(t, r) for t, r, _ in samples], since)
    if len(judged) < 20:
        print(f"soak: {len(judged)} samples to judge; run for longer")
        return False
    slope = slope_per_minute(judged)
    steady = [s for s in samples if s[0] >= WARM_UP]
    fds_early, fds_late = max(s[2] for s in steady[:10]), max(s[2] for s in steady[-10:])
    print(f"soak: {minutes:g} min, rss baseline {judged[0][1]:.1f} -> {judged[-1][1]:.1f} MB, slope {slope:+.2f} "
          f"MB/min over {judged[0][0]:.0f}-{judged[-1][0]:.0f} s ({len(judged)} samples, limit {SLOPE_LIMIT:g}), "
          f"fds {fds_early} -> {fds_late}, exit {status}")
    return slope <= SLOPE_LIMIT and fds_late <= fds_early + 2 and status == 130


if sys.argv[1] == "--judge":
    leak = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
    rows = [line.split() for line in open(sys.argv[2])]
    samples = [(float(t), float(r) + leak * float(t) / 60, int(n)) for t, r, n in rows]
    if not judge(samples, round(samples[-1][0] / 60, 1), 130):
        sys.exit("soak: memory grew (slope over the limit) or descriptors grew")
    sys.exit(0)
minutes = float(sys.argv[2])
samples, status = run(sys.argv[1], minutes)
if not judge(samples, minutes, status):
    sys.exit("soak: memory grew (slope over the limit), descriptors grew, or the run did not stop cleanly")
