"""Recall against the stock GStreamer zbar element, per symbology, on the small-codes scene (or another).

For each clip (`barscope generate --scene small --seed S --size WxH`), runs the stock element
(`filesrc ! qtdemux ! h264parse ! avdec_h264 ! videoconvert ! zbar ! fakesink`, messages on) and barscope
(`run --every-frame --viewfinder off`, each engine asked for), matches reads per frame and symbology against the
generator's truth, and prints a table: symbol-frames in the truth, read by the stock element, by each barscope
engine, stock reads barscope missed, and false reads (a type and text not in that frame's truth).

    python3 scripts/recall.py --barscope .build/release/barscope --clips 960x540:1,1280x720:2 --frames 90
"""
import argparse, collections, json, os, re, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import normalise  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--barscope", required=True)
p.add_argument("--clips", default="960x540:1", help="SIZE:SEED,... (one clip each)")
p.add_argument("--frames", type=int, default=90)
p.add_argument("--engines", default="zbar,both")
p.add_argument("--scene", default="small", help="the generator's scene (codes: the bench's demo clips)")
p.add_argument("--json", help="write the counts here")
p.add_argument("--keep", help="folder for the clips and outputs (default: a temporary one)")
args = p.parse_args()
work = args.keep or tempfile.mkdtemp(prefix="barscope-recall-")
os.makedirs(work, exist_ok=True)
FRAME_NS = 1_000_000_000 / 30


def stock(clip):
    r = subprocess.run(["gst-launch-1.0", "-m", "filesrc", f"location={clip}", "!", "qtdemux", "!", "h264parse", "!",
                        "avdec_h264", "!", "videoconvert", "!", "zbar", "!", "fakesink"],
                       capture_output=True, text=True, check=True)
    found = []
    for line in r.stdout.splitlines():
        if "barcode" not in line:
            continue
        ts = re.search(r"timestamp=\(guint64\)(\d+)", line)
        ty = re.search(r"type=\(string\)([^,]+)", line)
        sy = re.search(r'symbol=\(string\)(?:"((?:[^"\\]|\\.)*)"|([^,]+))', line)
        if ts and ty and sy:
            data = sy.group(1) if sy.group(1) is not None else sy.group(2)
            data = data.replace('\\"', '"').replace("\\\\", "\\")
            found.append((int(ts.group(1)), *normalise(ty.group(1), data)))
    return found


def barscope(clip, engine):
    r = subprocess.run([args.barscope, "run", clip, "--every-frame", "--viewfinder", "off", "--quiet", "--engine",
                        engine], capture_output=True, text=True, check=True)
    found, offsets = [], []
    for line in r.stdout.splitlines():
        e = json.loads(line)
        if e["event"] == "detection":
            found.append((e["frame"], e["type"], e["data"]))
            offsets.append(e["pts_ns"] - e["frame"] * FRAME_NS)
    return found, min(offsets) if offsets else 0


totals = collections.defaultdict(lambda: collections.Counter())
for spec in args.clips.split(","):
    size, seed = spec.split(":")
    clip = os.path.join(work, f"{args.scene}-{size}-{seed}.mp4")
    truth_path = clip.replace(".mp4", ".jsonl")
    subprocess.run([args.barscope, "generate", clip, "--scene", args.scene, "--seed", seed, "--size", size, "--frames",
                    str(args.frames), "--truth", truth_path], check=True)
    truth = set()
    for line in open(truth_path):
        t = json.loads(line)
        for c in t["codes"]:
            truth.add((t["frame"], c["type"], c["data"]))
    runs = {e: barscope(clip, e) for e in args.engines.split(",")}
    first = min(off for _, off in runs.values())
    got = {"stock": {(round((ts - first) / FRAME_NS), ty, d) for ts, ty, d in stock(clip)}}
    for e, (found, _) in runs.items():
        got[e] = set(found)
    for (_, ty, _) in truth:
        totals[ty]["truth"] += 1
    for name, reads in got.items():
        for r in reads:
            ty = r[1]
            if r in truth:
                totals[ty][name] += 1
            else:
                totals[ty][name + " false"] += 1
                print(f"{spec} {name}: false read {r}", file=sys.stderr)
    for name in got:
        if name == "stock":
            continue
        for r in sorted(got["stock"] & truth - got[name]):
            totals[r[1]][name + " lost"] += 1
            print(f"{spec} {name}: lost {r}", file=sys.stderr)
    if "zbar" in got and "both" in got:
        for r in sorted(got["zbar"] & truth - got["both"]):
            totals[r[1]]["both lost vs zbar"] += 1
            print(f"{spec} both: lost vs zbar {r}", file=sys.stderr)

names = ["stock"] + args.engines.split(",")
cols = ["truth"] + [n for n in names] + [n + " lost" for n in names[1:]] + [n + " false" for n in names]
if "zbar" in names and "both" in names:
    cols.append("both lost vs zbar")
print("| symbology | " + " | ".join(cols) + " |")
print("|" + " --- |" * (len(cols) + 1))
grand = collections.Counter()
for ty in sorted(totals):
    print(f"| {ty} | " + " | ".join(str(totals[ty][c]) for c in cols) + " |")
    grand.update(totals[ty])
print("| **all** | " + " | ".join(str(grand[c]) for c in cols) + " |")
if args.json:
    with open(args.json, "w") as f:
        json.dump({ty: dict(c) for ty, c in totals.items()}, f, indent=1)
