"""Soak test: run the live demo with recording and events, sample RSS and FDs, judge the drift."""
import os, statistics, subprocess, sys, tempfile, time

tool, minutes = sys.argv[1], float(sys.argv[2])
work = tempfile.mkdtemp(prefix="barscope-soak-")
events = os.path.join(work, "events.jsonl")
cmd = [tool, "run", "demo", "--live", "--frames", "0", "--size", "1920x1080", "--record",
       os.path.join(work, "soak.mkv"), "--segment", "60", "--events", events, "--quiet"]
proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
samples = []  # (seconds, rss MB, fds)
start = time.time()
try:
    while time.time() - start < minutes * 60:
        time.sleep(10)
        if proc.poll() is not None:
            sys.exit(f"soak: barscope ended early ({proc.returncode}): {proc.stderr.read().decode()[-300:]}")
        rss = next(int(l.split()[1]) for l in open(f"/proc/{proc.pid}/status") if l.startswith("VmRSS")) / 1024
        fds = len(os.listdir(f"/proc/{proc.pid}/fd"))
        samples.append((time.time() - start, rss, fds))
        print(f"soak: {samples[-1][0]:6.0f} s  rss {rss:7.1f} MB  fds {fds}", flush=True)
finally:
    proc.send_signal(2)  # SIGINT: finish the recording
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()

# Judge after a warm-up (the first 30 s fill the encoder's and the pools' buffers).
steady = [s for s in samples if s[0] >= 30] or samples
third = max(1, len(steady) // 3)
early, late = steady[:third], steady[-third:]
rss_early, rss_late = statistics.median(s[1] for s in early), statistics.median(s[1] for s in late)
fds_early, fds_late = max(s[2] for s in early), max(s[2] for s in late)
drift = rss_late - rss_early
frames = sum(1 for l in open(events) if '"event":"eos"' in l)
print(f"soak: {minutes:g} min, rss {rss_early:.1f} -> {rss_late:.1f} MB (drift {drift:+.1f} MB), "
      f"fds {fds_early} -> {fds_late}, exit {proc.returncode}")
ok = drift <= max(10.0, 0.05 * rss_early) and fds_late <= fds_early + 2 and proc.returncode == 130
sys.exit(0 if ok else "soak: memory or descriptors grew, or the run did not stop cleanly")
