"""Publishing benchmark: events per second to a local mosquitto with --every-frame on the 1080p bench clip, and the
pipeline's frame rate with publishing on against the same run without it (interleaved, median of --runs).
"""
import argparse, os, re, shutil, socket, statistics, subprocess, sys, tempfile, time

p = argparse.ArgumentParser()
p.add_argument("--barscope", required=True)
p.add_argument("--out", required=True)
p.add_argument("--runs", type=int, default=3)
p.add_argument("--size", default="1920x1080")
p.add_argument("--frames", type=int, default=600)
args = p.parse_args()
os.makedirs(args.out, exist_ok=True)
work = tempfile.mkdtemp(prefix="barscope-bench-publish-")

s = socket.socket()
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
s.close()
with open(os.path.join(work, "mosquitto.conf"), "w") as f:
    f.write(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\nmax_queued_messages 0\n")
broker = subprocess.Popen(["/usr/sbin/mosquitto", "-c", os.path.join(work, "mosquitto.conf")],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
# Ready when its port accepts (at most 10 s).
deadline = time.monotonic() + 10
while True:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        break
    except OSError:
        if time.monotonic() > deadline or broker.poll() is not None:
            sys.exit(f"bench_publish: mosquitto on port {port} not accepting in 10 s (exit {broker.poll()})")
        time.sleep(0.02)
# A subscriber, so that the broker really delivers every message somewhere.
sub = subprocess.Popen(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-t", "bench/#", "-q", "1"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

clip = os.path.join(work, "bench.mp4")
subprocess.run([args.barscope, "generate", clip, "--size", args.size, "--frames", str(args.frames)], check=True)
base = [args.barscope, "run", clip, "--viewfinder", "off", "--every-frame", "--events", "/dev/null"]
modes = [("without publishing", lambda: base),
         ("--publish mqtt://", lambda: base + ["--publish", f"mqtt://127.0.0.1:{port}/bench", "--node", "bench",
                                               "--spool", os.path.join(work, "spool")])]
runs = {name: [] for name, _ in modes}
try:
    for _ in range(args.runs):
        for name, make in modes:
            t0 = time.monotonic()
            r = subprocess.run(make(), capture_output=True, text=True)
            wall = time.monotonic() - t0
            if r.returncode != 0:
                sys.exit(f"bench publish: {name} failed: {r.stderr[-400:]}")
            summary = [l for l in r.stderr.splitlines() if " frames in " in l][-1]
            fps = float(re.search(r"\(([0-9.]+) frames/s\)", summary).group(1))
            published = int(m.group(1)) if (m := re.search(r"(\d+) published to", summary)) else 0
            runs[name].append((fps, published, wall))
finally:
    sub.kill()
    broker.kill()
    shutil.rmtree(work, ignore_errors=True)

plain = statistics.median(r[0] for r in runs["without publishing"])
lines = ["| mode | frames/s | × without | events published | events/s |", "| --- | --- | --- | --- | --- |"]
for name, _ in modes:
    fps = statistics.median(r[0] for r in runs[name])
    published = statistics.median(r[1] for r in runs[name])
    wall = statistics.median(r[2] for r in runs[name])
    lines.append(f"| {name} | {fps:.1f} | {fps / plain:.3f} | {published:.0f} | {published / wall:.0f} |")
table = "\n".join(lines)
print(f"{args.size}, {args.frames} frames, --every-frame, median of {args.runs}:")
print(table)
with open(os.path.join(args.out, "bench-publish.md"), "w") as f:
    f.write(table + "\n")
