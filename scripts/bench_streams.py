"""Streams per machine: how many live 1080p30 streams one `barscope serve` process carries in tracked mode, against
the stock zbar element (one gst-launch-1.0 process per stream), measured in the same run.

For each case, N streams start (N = --start, then one more each step) and run --seconds after a warm-up; the step
holds when every stream's frames that reached the tee in the window were all scanned (none dropped), each stream got
at least 97 % of its 30 frames/s, and each stream's 95th-percentile latency (tee to event, from /metrics'
histogram over the window) is under 100 ms. The case's answer is the largest N that held.

Cases: barscope on the built-in demo source at 1920x1080 (rendered in the same process: its cost counts), barscope
on RTSP (a loopback gst-rtsp-server serving the 1080p bench clip in a loop, each stream its own session), each
with events only and with an annotated recording per stream; the stock element on the same RTSP stream and on the
bench clip played at its own pace (sync=true), its frames counted by fpsdisplaysink.

CPU is the process's (all of the N stock processes') user+system time over the window, in cores; memory is the
resident size at the end, per added stream as (RSS with N streams - RSS with 1) / (N - 1) for barscope, and the
mean per process for the stock element. The demo cases report every frame's detections (`tracking.every-frame`),
read from each instance's event stream, and their recall against the scene's truth over the window's frames (the
live demo's frame N is the scene's frame N); the RTSP cases report codes as they appear.
"""
import argparse, json, os, re, shutil, signal, socket, subprocess, sys, tempfile, threading, time, urllib.request

p = argparse.ArgumentParser()
p.add_argument("--barscope", required=True)
p.add_argument("--out", required=True)
p.add_argument("--seconds", type=float, default=60)
p.add_argument("--warmup", type=float, default=8)
p.add_argument("--start", type=int, default=1, help="first N of every barscope case")
p.add_argument("--max", type=int, default=16)
p.add_argument("--cases", default="demo,rtsp,demo+rec,rtsp+rec,stock-rtsp,stock-file")
args = p.parse_args()
os.makedirs(args.out, exist_ok=True)
work = tempfile.mkdtemp(prefix="barscope-streams-")
FPS = 30
TICK = os.sysconf("SC_CLK_TCK")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_mb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def http(port, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        raw = r.read().decode()
        return json.loads(raw) if r.headers.get("Content-Type", "").startswith("application/json") else raw


def histogram(metrics, instance):
    """Cumulative latency buckets (le → count) of one instance from Prometheus text."""
    out = {}
    for m in re.finditer(r'barscope_event_latency_seconds_bucket\{instance="%s",le="([^"]+)"\} (\d+)'
                         % re.escape(instance), metrics):
        out[m.group(1)] = int(m.group(2))
    return out


def p95_from(before, after):
    """The 95th percentile's bucket bound (ms) over the window, from two cumulative histograms."""
    total = after.get("+Inf", 0) - before.get("+Inf", 0)
    if total <= 0:
        return None
    for le in sorted((k for k in after if k != "+Inf"), key=float):
        if after[le] - before.get(le, 0) >= 0.95 * total:
            return float(le) * 1000
    return float("inf")


# The 1080p bench clip: the demo scene, H.264 without B-frames, as an Annex-B stream for the RTSP server and as MP4
# for the stock element's file case.
clip_mp4 = os.path.join(work, "bench-1080p.mp4")
clip_h264 = os.path.join(work, "bench-1080p.h264")
subprocess.run([args.barscope, "generate", clip_mp4, "--size", "1920x1080", "--frames", "300"], check=True,
               stderr=subprocess.DEVNULL)
subprocess.run(["gst-launch-1.0", "-q", "filesrc", f"location={clip_mp4}", "!", "qtdemux", "!", "h264parse", "!",
                "video/x-h264,stream-format=byte-stream,alignment=au", "!", "filesink", f"location={clip_h264}"],
               check=True)
rtsp_port = free_port()
here = os.path.dirname(os.path.abspath(__file__))
rtsp_server = subprocess.Popen(["/usr/bin/python3", os.path.join(here, "rtsp_clip_server.py"), clip_h264,
                                str(rtsp_port)], stdout=subprocess.PIPE, text=True)
rtsp_url = rtsp_server.stdout.readline().strip()
if not rtsp_url.startswith("rtsp://"):
    sys.exit("bench streams: the RTSP server did not start (python3-gi, gir1.2-gst-rtsp-server-1.0)")

pipelines = os.path.join(work, "pipelines")
os.makedirs(pipelines)
with open(os.path.join(pipelines, "bench.conf"), "w") as f:
    f.write("[pipeline]\ndescription = scripts/bench streams\n[source]\ninput = demo\nsize = 1920x1080\nfps = 30\n"
            "frames = 0\nlive = true\n[viewfinder]\nenabled = false\n[decoder]\ntracked = true\n")


# The demo source's frame N is the scene's frame N: its truth, for the recall of each demo stream (detections of
# every frame, `tracking.every-frame`, read from each instance's event stream during the window).
truth_path = os.path.join(work, "truth-1080p.jsonl")
truth_frames = int((args.warmup + args.seconds + 30) * FPS)
subprocess.run([args.barscope, "generate", truth_path, "--size", "1920x1080", "--frames", str(truth_frames)],
               check=True)
truth = {}
for line in open(truth_path):
    t = json.loads(line)
    truth[t["frame"]] = {(c["type"], c["data"]) for c in t["codes"]}


class Detections(threading.Thread):
    """Reads one instance's Server-Sent Events; keeps (frame, type, data) of every detection."""

    def __init__(self, port, instance):
        super().__init__(daemon=True)
        self.url = f"http://127.0.0.1:{port}/v1/instances/{instance}/events"
        self.found = set()
        self.stop = False

    def run(self):
        try:
            with urllib.request.urlopen(self.url, timeout=300) as r:
                for raw in r:
                    if self.stop:
                        return
                    line = raw.decode(errors="replace")
                    if line.startswith("data: ") and '"detection"' in line:
                        e = json.loads(line[6:])
                        self.found.add((e["frame"], e["type"], e["data"]))
        except (OSError, ValueError):
            pass

    def recall(self, first, last):
        expected = {(f, *c) for f in range(first, last) for c in truth.get(f, ())}
        return len(self.found & expected) / len(expected) if expected else None


def barscope_step(source, record, n):
    port = free_port()
    state = tempfile.mkdtemp(dir=work)
    serve = subprocess.Popen([args.barscope, "serve", "--listen", f"127.0.0.1:{port}", "--state", state,
                              "--pipelines", pipelines], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(100):
            try:
                http(port, "GET", "/healthz")
                break
            except OSError:
                time.sleep(0.1)
        else:
            sys.exit(f"bench_streams: barscope serve not answering /healthz on port {port} in 10 s")
        idle_rss = rss_mb(serve.pid)
        ids = []
        for i in range(n):
            sets = {"source.input": rtsp_url if source == "rtsp" else "demo"}
            if source == "demo":
                sets["tracking.every-frame"] = "true"
            if record:
                sets["record.path"] = os.path.join(state, f"cam{i}.mp4")
            ids.append(http(port, "POST", "/v1/pipelines/bench/instances", {"set": sets})["id"])
        readers = {}
        if source == "demo":
            for i in ids:
                readers[i] = Detections(port, i)
                readers[i].start()
        time.sleep(args.warmup)  # the warm-up the figures leave out (a measurement window, not a wait)
        before = {i: http(port, "GET", f"/v1/instances/{i}") for i in ids}
        m0 = http(port, "GET", "/metrics")
        c0, t0 = cpu_seconds(serve.pid), time.time()
        time.sleep(args.seconds)  # the window measured
        after = {i: http(port, "GET", f"/v1/instances/{i}") for i in ids}
        m1 = http(port, "GET", "/metrics")
        c1, t1 = cpu_seconds(serve.pid), time.time()
        rss = rss_mb(serve.pid)
        window = t1 - t0
        streams = []
        for i in ids:
            a, b = after[i], before[i]
            frames_in = a["frames_in"] - b["frames_in"]
            streams.append({"id": i, "state": a["state"], "in_fps": frames_in / window,
                            "scanned": a["frames"] - b["frames"], "dropped": a["frames_dropped"] - b["frames_dropped"],
                            "frames_in": frames_in, "p95_ms": p95_from(histogram(m0, i), histogram(m1, i)),
                            "codes": a["codes"], "run_p95_ms": (a.get("latency_ms") or {}).get("p95"),
                            "recall": readers[i].recall(b["frames_in"], a["frames_in"]) if i in readers else None})
        for r in readers.values():
            r.stop = True
        # The histogram's bucket bounds: p95 within the 100 ms bucket is under 100 ms.
        holds = all(s["dropped"] == 0 and s["in_fps"] >= 0.97 * FPS and s["p95_ms"] is not None
                    and s["p95_ms"] <= 100 for s in streams)
        return {"n": n, "holds": holds, "cpu_cores": (c1 - c0) / window, "rss_mb": rss,
                "mb_per_stream": (rss - idle_rss) / n, "streams": streams}
    finally:
        serve.send_signal(signal.SIGTERM)
        try:
            serve.wait(timeout=60)
        except subprocess.TimeoutExpired:
            serve.kill()
        shutil.rmtree(state, ignore_errors=True)


def stock_step(source, n):
    if source == "rtsp":
        head = ["rtspsrc", f"location={rtsp_url}", "latency=200", "!", "rtph264depay", "!", "h264parse", "!"]
    else:
        head = ["filesrc", f"location={clip_mp4}", "!", "qtdemux", "!", "h264parse", "!"]
    # The file case loops by being long enough: the 300-frame clip lasts 10 s, so the window is capped to it.
    cmd = ["gst-launch-1.0", "-v"] + head + ["avdec_h264", "max-threads=1", "!", "videoconvert", "!", "zbar", "!",
                                             "fpsdisplaysink", "video-sink=fakesink", "text-overlay=false",
                                             "sync=true", "fps-update-interval=1000"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) for _ in range(n)]
    window = args.seconds if source == "rtsp" else min(args.seconds, 300 / FPS - 2)
    try:
        time.sleep(1 if source == "file" else args.warmup)  # the warm-up the figures leave out
        c0 = sum(cpu_seconds(q.pid) for q in procs)
        t0 = time.time()
        time.sleep(window)  # the window measured
        c1 = sum(cpu_seconds(q.pid) for q in procs)
        t1 = time.time()
        rss = [rss_mb(q.pid) for q in procs]
    finally:
        for q in procs:
            q.send_signal(signal.SIGINT)
        outs = []
        for q in procs:
            try:
                out, _ = q.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                q.kill()
                out, _ = q.communicate()
            outs.append(out)
    streams = []
    for out in outs:
        # fpsdisplaysink's last-message each second: "rendered: R, dropped: D, current: C, average: A"; the rate
        # over the window is the mean of its last seconds' "current".
        m = re.findall(r"rendered: (\d+), dropped: (\d+), current: ([\d.]+), average: ([\d.]+)", out)
        r, d = (m[-1][0], m[-1][1]) if m else (0, 0)
        current = [float(x[2]) for x in m][-max(1, int(window)):]
        streams.append({"rendered": int(r), "dropped": int(d),
                        "average_fps": sum(current) / len(current) if current else 0.0})
    holds = all(s["dropped"] == 0 and s["average_fps"] >= 0.97 * FPS for s in streams)
    return {"n": n, "holds": holds, "cpu_cores": (c1 - c0) / (t1 - t0), "rss_mb": sum(rss),
            "mb_per_stream": sum(rss) / n, "streams": streams}


def report(case, step):
    worst = max((s.get("p95_ms") or 0) for s in step["streams"]) if not case.startswith("stock") else None
    print(f"{case}: N={step['n']} {'holds' if step['holds'] else 'fails'}, {step['cpu_cores']:.2f} cores, "
          f"{step['mb_per_stream']:.0f} MB/stream" + (f", worst p95 {worst:.0f} ms" if worst is not None else "")
          + f"  {json.dumps(step['streams'])}", file=sys.stderr, flush=True)


results = {}
for case in args.cases.split(","):
    steps = []
    n = 1 if case.startswith("stock") else args.start
    while n <= args.max:
        if case.startswith("stock"):
            step = stock_step(case.split("-")[1], n)
        else:
            step = barscope_step(case.split("+")[0], case.endswith("+rec"), n)
        steps.append(step)
        report(case, step)
        if not step["holds"]:
            # Started above 1 and failed at once: look below.
            if n == args.start and n > 1 and not case.startswith("stock") and len(steps) == 1:
                n -= 1
                while n >= 1:
                    below = barscope_step(case.split("+")[0], case.endswith("+rec"), n)
                    steps.append(below)
                    report(case, below)
                    if below["holds"]:
                        break
                    n -= 1
            break
        n += 1
    held = [s for s in steps if s["holds"]]
    results[case] = {"largest_n": max((s["n"] for s in held), default=0), "steps": steps}

rtsp_server.terminate()
names = {"demo": "barscope tracked, demo 1080p30, events only", "rtsp": "barscope tracked, RTSP 1080p30, events only",
         "demo+rec": "barscope tracked, demo 1080p30, annotated recording each",
         "rtsp+rec": "barscope tracked, RTSP 1080p30, annotated recording each",
         "stock-rtsp": "stock zbar (one process each), RTSP 1080p30",
         "stock-file": "stock zbar (one process each), 1080p clip at its pace"}
lines = ["| case | largest N that holds | CPU at that N (cores) | MB per added stream | worst p95 at that N | "
         "worst recall at that N (1 stream) |", "| --- | --- | --- | --- | --- | --- |"]
for case, r in results.items():
    best = next((s for s in r["steps"] if s["n"] == r["largest_n"]), None)
    if best is None:
        lines.append(f"| {names.get(case, case)} | 0 | | | | |")
        continue
    p95 = max((s.get("run_p95_ms") or 0) for s in best["streams"]) if not case.startswith("stock") else None
    # Per added stream: beyond the first (which also loads GStreamer's plugins); the stock element's, per process.
    one = next((s for s in r["steps"] if s["n"] == 1), None)
    if case.startswith("stock") or one is None or best["n"] == 1:
        added = best["mb_per_stream"]
    else:
        added = (best["rss_mb"] - one["rss_mb"]) / (best["n"] - 1)
    recalls = [s["recall"] for s in best["streams"] if s.get("recall") is not None]
    single = [s["recall"] for s in (one or {}).get("streams", []) if s.get("recall") is not None]
    rec = (f"{min(recalls) * 100:.1f} %" if recalls else "") + (f" ({single[0] * 100:.1f} %)" if single else "")
    lines.append(f"| {names.get(case, case)} | {r['largest_n']} | {best['cpu_cores']:.2f} | "
                 f"{added:.0f} | {'' if p95 is None else f'{p95:.0f} ms'} | {rec} |")
table = "\n".join(lines)
print(table)
with open(os.path.join(args.out, "streams.json"), "w") as f:
    json.dump({"date": time.strftime("%Y-%m-%d %H:%M:%S"), "cores": os.cpu_count(), "seconds": args.seconds,
               "results": results}, f, indent=1)
with open(os.path.join(args.out, "streams.md"), "w") as f:
    f.write(table + "\n")
shutil.rmtree(work, ignore_errors=True)
