"""Barscope benchmark: decode-only, the stock zbar element and barscope's modes on the same clips.

Each clip is made by `barscope generate` (the demo scene: QR, EAN-13, CODE-128, moving; truth per frame). Every
mode runs on every clip, interleaved, `--runs` times; the table shows medians of wall time, frames per second,
ratios to the stock element and to decode-only, peak resident memory, CPU time, and frame-level recall and
precision against the truth (the stock element's messages are scored the same way).
"""
import argparse, json, os, re, statistics, subprocess, sys, tempfile, time

p = argparse.ArgumentParser()
p.add_argument("--barscope", required=True)
p.add_argument("--out", required=True)
p.add_argument("--runs", type=int, default=3)
p.add_argument("--sizes", default="1280x720,1920x1080,3840x2160")
# 600 frames: process start-up (about 0.15 s for every mode, the stock element's gst-launch-1.0 included) stays
# small beside the fastest modes' runs.
p.add_argument("--frames", type=int, default=600)
args = p.parse_args()
os.makedirs(args.out, exist_ok=True)
work = tempfile.mkdtemp(prefix="barscope-bench-")

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import timed, decode_pipeline, stock_detections, barscope_detections, score  # noqa: E402

modes = [
    ("decode only", lambda clip: decode_pipeline(clip, ["fakesink"])),
    ("stock zbar", lambda clip: decode_pipeline(clip, ["zbar", "!", "fakesink"])),
    ("barscope, 1 thread, full frame", lambda clip: [args.barscope, "run", clip, "--viewfinder", "off",
                                                     "--every-frame", "--quiet", "--scan-threads", "1"]),
    ("barscope, full frame", lambda clip: [args.barscope, "run", clip, "--viewfinder", "off", "--every-frame",
                                           "--quiet"]),
    ("barscope, 4:3 viewfinder", lambda clip: [args.barscope, "run", clip, "--every-frame", "--quiet"]),
    ("barscope, tracked, full frame", lambda clip: [args.barscope, "run", clip, "--viewfinder", "off",
                                                    "--every-frame", "--tracked", "--quiet"]),
]

results = []
for size in args.sizes.split(","):
    w, h = map(int, size.split("x"))
    frames = args.frames if h <= 1080 else max(60, args.frames // 3)
    clip = os.path.join(work, f"demo-{size}.mp4")
    truth_path = os.path.join(work, f"demo-{size}.jsonl")
    subprocess.run([args.barscope, "generate", clip, "--size", size, "--frames", str(frames), "--truth", truth_path],
                   check=True)
    truth = [json.loads(l) for l in open(truth_path)]
    runs = {name: [] for name, _ in modes}
    outputs = {}
    for _ in range(args.runs):
        for name, make in modes:  # interleaved: one run of each mode per round
            wall, rss, cpu, out = timed(make(clip))
            runs[name].append((wall, rss, cpu))
            outputs[name] = out
    # The stock element's timestamps are the decoder's pts; frame 0's pts comes from barscope's events.
    _, first_pts = barscope_detections(outputs["barscope, full frame"])
    frame_ns = 1_000_000_000 / 30
    base = {}
    for name, _ in modes:
        wall = statistics.median(r[0] for r in runs[name])
        row = {"clip": size, "frames": frames, "mode": name, "seconds": wall, "fps": frames / wall,
               "peak_rss_mb": statistics.median(r[1] for r in runs[name]),
               "cpu_seconds": statistics.median(r[2] for r in runs[name])}
        if name == "stock zbar":
            found = stock_detections(outputs[name], first_pts or 0, frame_ns)
            row["recall"], row["precision"], row["false_positives"] = score(found, truth, False)
        elif name.startswith("barscope"):
            found, _ = barscope_detections(outputs[name])
            row["recall"], row["precision"], row["false_positives"] = score(found, truth, "viewfinder" in name)
        base[name] = row
        results.append(row)
    for name, _ in modes:
        base[name]["vs_stock"] = base[name]["fps"] / base["stock zbar"]["fps"]
        base[name]["vs_decode"] = base[name]["fps"] / base["decode only"]["fps"]

header = "| clip | mode | frames/s | × stock zbar | × decode | peak RSS MB | CPU s | recall | precision |"
lines = [header, "|" + " --- |" * 9]
for r in results:
    rec = f"{r['recall'] * 100:.1f}%" if "recall" in r else ""
    pre = f"{r['precision'] * 100:.1f}%" if "precision" in r else ""
    lines.append(f"| {r['clip']} | {r['mode']} | {r['fps']:.1f} | {r['vs_stock']:.2f} | {r['vs_decode']:.3f} | "
                 f"{r['peak_rss_mb']:.0f} | {r['cpu_seconds']:.1f} | {rec} | {pre} |")
table = "\n".join(lines)
print(table)
with open(os.path.join(args.out, "bench.json"), "w") as f:
    json.dump({"date": time.strftime("%Y-%m-%d %H:%M:%S"), "runs": args.runs, "cores": os.cpu_count(),
               "results": results}, f, indent=1)
with open(os.path.join(args.out, "bench.md"), "w") as f:
    f.write(table + "\n")
print("recall: the recall column for the viewfinder mode counts only codes inside the region (the others must not "
      "be reported); the stock element and full-frame modes count every code.", file=sys.stderr)
