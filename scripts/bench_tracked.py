"""Tracked mode against the stock zbar element on varied clips: small, many, fast, low-bitrate and short ones.

Each clip is made by `barscope generate` (the mixed scene or the demo scene, H.264 MP4, truth per frame); on each,
interleaved, `--runs` times: the stock element (`filesrc ! qtdemux ! h264parse ! avdec_h264 ! zbar ! fakesink`)
and `barscope run CLIP --viewfinder off --every-frame --tracked` (and, with `--baseline BINARY`, another build's
tracked mode, to compare). Recall is per symbol-frame against the truth: (frame, type, data) read / in the truth,
for both. The clips come in two sets made from different seeds and sizes: `choose` (what the parameters were
chosen on) and `held-out` (reported, never tuned on). Prints one row per clip and mode, then the WORST ratio to the
stock element (by wall time, and by CPU time: on a shared machine the CPU time is the steadier), the WORST recall
and the WORST recall gap to the stock element over the clips.
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import timed, decode_pipeline, stock_detections, barscope_detections, score  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--barscope", required=True)
p.add_argument("--out", required=True)
p.add_argument("--runs", type=int, default=3)
p.add_argument("--set", choices=["choose", "held-out", "all"], default="all")
p.add_argument("--baseline", help="another barscope binary whose tracked mode runs beside this one's")
p.add_argument("--only", help="comma-separated clip names")
p.add_argument("--extra", default="", help="extra arguments for this build's tracked mode (space-separated)")
args = p.parse_args()
os.makedirs(args.out, exist_ok=True)
work = tempfile.mkdtemp(prefix="barscope-bench-tracked-")

MIX = ["--scene", "mix"]
# name: (set, generate arguments). Small: 1D codes of 1.5 px modules (drawn antialiased: soft edges), one coming
# into view every 5 frames of a 1.5 s clip (the case; a blur over 1.5 px modules leaves the stock element
# nothing to read, 2 px modules blurred are held out); many: 16 codes; fast: 20 px a frame; low bitrate: 1.5 Mbit/s at 1080p;
# short: the demo scene for 1.5 s. The held-out set: other seeds, sizes and module sizes of the same kinds.
CLIPS = {
    "small-1d": ("choose", ["--size", "1920x1080", "--frames", "45"] + MIX +
                 ["--module", "1.5", "--only-1d", "--codes", "8", "--appear-every", "5", "--seed", "1"]),
    "many": ("choose", ["--size", "1920x1080", "--frames", "150"] + MIX +
             ["--codes", "16", "--module", "2", "--appear-every", "4", "--seed", "2"]),
    "fast": ("choose", ["--size", "1920x1080", "--frames", "150"] + MIX +
             ["--codes", "6", "--module", "2.5", "--speed", "20", "--appear-every", "10", "--seed", "3"]),
    "low-bitrate": ("choose", ["--size", "1920x1080", "--frames", "300", "--bitrate", "1500"]),
    "short-demo": ("choose", ["--size", "1920x1080", "--frames", "45"]),
    "ho-small-1d": ("held-out", ["--size", "1920x1080", "--frames", "60"] + MIX +
                    ["--module", "2", "--blur", "1", "--only-1d", "--codes", "10", "--appear-every", "4",
                     "--seed", "11"]),
    "ho-small-mixed": ("held-out", ["--size", "1280x720", "--frames", "90"] + MIX +
                       ["--module", "1.5", "--codes", "8", "--appear-every", "7", "--speed", "2", "--seed", "12"]),
    "ho-many": ("held-out", ["--size", "1920x1080", "--frames", "120"] + MIX +
                ["--codes", "24", "--module", "1.75", "--appear-every", "3", "--seed", "13"]),
    "ho-fast": ("held-out", ["--size", "1920x1080", "--frames", "120"] + MIX +
                ["--codes", "5", "--module", "2", "--speed", "28", "--appear-every", "9", "--blur", "1",
                 "--seed", "14"]),
    "ho-low-bitrate": ("held-out", ["--size", "1920x1080", "--frames", "150", "--bitrate", "1000"] + MIX +
                       ["--codes", "8", "--module", "2", "--appear-every", "8", "--seed", "15"]),
    "ho-short-demo": ("held-out", ["--size", "2560x1440", "--frames", "30"]),
}

modes = [("stock zbar", lambda clip: decode_pipeline(clip, ["zbar", "!", "fakesink"])),
         ("tracked", lambda clip: [args.barscope, "run", clip, "--viewfinder", "off", "--every-frame", "--tracked",
                                   "--quiet"] + args.extra.split())]
if args.baseline:
    modes.append(("tracked (baseline)", lambda clip: [args.baseline, "run", clip, "--viewfinder", "off",
                                                      "--every-frame", "--tracked", "--quiet"]))

rows = []
only = set(args.only.split(",")) if args.only else None
for name, (which, gen) in CLIPS.items():
    if args.set != "all" and which != args.set or only and name not in only:
        continue
    clip = os.path.join(work, name + ".mp4")
    truth_path = os.path.join(work, name + ".jsonl")
    subprocess.run([args.barscope, "generate", clip, "--truth", truth_path] + gen, check=True)
    truth = [json.loads(l) for l in open(truth_path)]
    frames = len(truth)
    runs = {m: [] for m, _ in modes}
    outputs = {}
    for _ in range(args.runs):
        for m, make in modes:
            wall, rss, cpu, out = timed(make(clip))
            runs[m].append((wall, cpu))
            outputs[m] = out
    # The stock element's timestamps are the decoder's pts: frame 0's pts from any of barscope's detections (its
    # pts less its frame's duration times its number), whichever frame it is on.
    first_pts = 0
    for line in outputs["tracked"].splitlines():
        e = json.loads(line)
        if e["event"] == "detection":
            first_pts = e["pts_ns"] - round(e["frame"] * 1_000_000_000 / 30)
            break
    stock_fps = frames / statistics.median(r[0] for r in runs["stock zbar"])
    stock_cpu = statistics.median(r[1] for r in runs["stock zbar"])
    for m, _ in modes:
        wall = statistics.median(r[0] for r in runs[m])
        cpu = statistics.median(r[1] for r in runs[m])
        if m == "stock zbar":
            found = stock_detections(outputs[m], first_pts, 1_000_000_000 / 30)
        else:
            found, _ = barscope_detections(outputs[m])
        recall, precision, fp = score(found, truth, False)
        rows.append({"clip": name, "set": which, "frames": frames, "mode": m, "fps": frames / wall,
                     "vs_stock": frames / wall / stock_fps, "cpu_seconds": cpu, "vs_stock_cpu": stock_cpu / cpu, "recall": recall, "precision": precision,
                     "false_positives": fp})
    print(" ".join(f"{r['mode']}: {r['fps']:.1f} fps {r['vs_stock']:.2f}x recall {r['recall'] * 100:.1f}%"
                   for r in rows[-len(modes):]), f"[{name}]", file=sys.stderr, flush=True)

lines = ["| clip | set | frames | mode | frames/s | × stock zbar | CPU s | × stock CPU | recall | precision |",
         "|" + " --- |" * 10]
for r in rows:
    lines.append(f"| {r['clip']} | {r['set']} | {r['frames']} | {r['mode']} | {r['fps']:.1f} | {r['vs_stock']:.2f} | "
                 f"{r['cpu_seconds']:.2f} | {r['vs_stock_cpu']:.2f} | {r['recall'] * 100:.1f}% | {r['precision'] * 100:.1f}% |")
summary = []
for m, _ in modes[1:]:
    mine = [r for r in rows if r["mode"] == m]
    if not mine:
        continue
    stock = {r["clip"]: r for r in rows if r["mode"] == "stock zbar"}
    worst_ratio = min(mine, key=lambda r: r["vs_stock"])
    worst_cpu = min(mine, key=lambda r: r["vs_stock_cpu"])
    worst_recall = min(mine, key=lambda r: r["recall"])
    worst_gap = max(mine, key=lambda r: stock[r["clip"]]["recall"] - r["recall"])
    gap = stock[worst_gap["clip"]]["recall"] - worst_gap["recall"]
    summary.append(f"{m}: worst ratio {worst_ratio['vs_stock']:.2f}x ({worst_ratio['clip']}), worst CPU ratio "
                   f"{worst_cpu['vs_stock_cpu']:.2f}x ({worst_cpu['clip']}), worst recall "
                   f"{worst_recall['recall'] * 100:.1f}% ({worst_recall['clip']}), worst gap to stock "
                   f"{gap * 100:+.1f} points ({worst_gap['clip']}: {worst_gap['recall'] * 100:.1f}% vs "
                   f"{stock[worst_gap['clip']]['recall'] * 100:.1f}%)")
table = "\n".join(lines)
print(table)
print("\n".join(summary))
with open(os.path.join(args.out, "bench-tracked.json"), "w") as f:
    json.dump({"date": time.strftime("%Y-%m-%d %H:%M:%S"), "runs": args.runs, "cores": os.cpu_count(),
               "recall": "symbol-frames read / symbol-frames in the truth", "results": rows, "summary": summary},
              f, indent=1)
with open(os.path.join(args.out, "bench-tracked.md"), "w") as f:
    f.write(table + "\n\n" + "\n".join(summary) + "\n")
