"""How well 1D polygons fit their symbols, per symbology, on the small-codes scene (or another).

For each clip (`barscope generate --scene small --seed S --size WxH --truth T.jsonl`), runs
`barscope run CLIP --every-frame --viewfinder off` and matches each detection to the truth code of the same frame,
type and text. The truth polygon is the bars' outline (the first bar's leading edge to the last bar's trailing edge,
the full bar height; the quiet zone left out). For each detection it measures:

- the worst corner: the largest distance from a detection corner to its truth corner (the corners paired in the
  cyclic order that fits best), and within the bound when it is under max(3 px, 1.5 modules); the scene's modules are
  at most 2 px, so the bound is 3 px;
- coverage: the share of the truth outline's area inside the detection polygon.

    python3 scripts/polygons.py --barscope .build/release/barscope --clips 960x540:1,1280x720:2 --frames 90
"""
import argparse, collections, json, math, os, subprocess, sys, tempfile

p = argparse.ArgumentParser()
p.add_argument("--barscope", required=True)
p.add_argument("--clips", default="960x540:1", help="SIZE:SEED,... (one clip each)")
p.add_argument("--frames", type=int, default=90)
p.add_argument("--scene", default="small")
p.add_argument("--bound", type=float, default=3.0, help="px (max(3 px, 1.5 modules) with modules of 2 px or less)")
p.add_argument("--keep", help="folder for the clips (default: a temporary one)")
p.add_argument("--worst", type=int, default=0, help="print the N worst detections")
p.add_argument("--json", help="write the figures here")
args = p.parse_args()
work = args.keep or tempfile.mkdtemp(prefix="barscope-polygons-")
os.makedirs(work, exist_ok=True)


def area(poly):
    return abs(sum(a[0] * b[1] - b[0] * a[1] for a, b in zip(poly, poly[1:] + poly[:1]))) / 2


def clip_convex(subject, clipper):
    """Sutherland-Hodgman: the part of `subject` inside the convex `clipper` (either winding)."""
    sign = 1 if sum(a[0] * b[1] - b[0] * a[1] for a, b in zip(clipper, clipper[1:] + clipper[:1])) > 0 else -1
    out = subject
    for a, b in zip(clipper, clipper[1:] + clipper[:1]):
        if not out:
            break
        def inside(q):
            return sign * ((b[0] - a[0]) * (q[1] - a[1]) - (b[1] - a[1]) * (q[0] - a[0])) >= 0
        def cut(q, r):
            dx, dy = r[0] - q[0], r[1] - q[1]
            ex, ey = b[0] - a[0], b[1] - a[1]
            den = dx * ey - dy * ex
            t = ((a[0] - q[0]) * ey - (a[1] - q[1]) * ex) / den if den else 0
            return (q[0] + t * dx, q[1] + t * dy)
        src, out = out, []
        for i, q in enumerate(src):
            r = src[(i + 1) % len(src)]
            if inside(q):
                out.append(q)
                if not inside(r):
                    out.append(cut(q, r))
            elif inside(r):
                out.append(cut(q, r))
    return out


def worst_corner(det, truth):
    """The largest corner distance, the corners paired in the best cyclic order (either direction)."""
    if len(det) != 4:
        return math.inf
    best = math.inf
    for order in (det, det[::-1]):
        for s in range(4):
            d = max(math.dist(order[(i + s) % 4], truth[i]) for i in range(4))
            best = min(best, d)
    return best


stats = collections.defaultdict(lambda: {"n": 0, "within": 0, "coverage": [], "worst": []})
worst_list = []
for spec in args.clips.split(","):
    size, seed = spec.split(":")
    clip = os.path.join(work, f"{args.scene}-{size}-{seed}.mp4")
    truth_path = clip.replace(".mp4", ".jsonl")
    if not os.path.exists(clip):
        subprocess.run([args.barscope, "generate", clip, "--scene", args.scene, "--seed", seed, "--size", size,
                        "--frames", str(args.frames), "--truth", truth_path], check=True, capture_output=True)
    truth = {}
    for line in open(truth_path):
        t = json.loads(line)
        for c in t["codes"]:
            truth[(t["frame"], c["type"], c["data"])] = [tuple(map(float, q)) for q in c["polygon"]]
    r = subprocess.run([args.barscope, "run", clip, "--every-frame", "--viewfinder", "off", "--quiet"],
                       capture_output=True, text=True, check=True)
    for line in r.stdout.splitlines():
        e = json.loads(line)
        if e["event"] != "detection":
            continue
        key = (e["frame"], e["type"], e["data"])
        if key not in truth:
            continue
        det = [tuple(q) for q in e["polygon"]]
        t = truth[key]
        w = worst_corner(det, t)
        cov = area(clip_convex(t, det)) / area(t) if len(det) >= 3 else 0.0
        s = stats[e["type"]]
        s["n"] += 1
        s["within"] += w <= args.bound
        s["coverage"].append(cov)
        s["worst"].append(w)
        worst_list.append((w, cov, spec, key, det, t))

print("| symbology | polygons | within bound | share | coverage mean | coverage min | coverage ≥ 0.95 | worst median |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
allw = allc = alln = 0
allcov = []
out = {}
for ty in sorted(stats):
    s = stats[ty]
    cov = s["coverage"]
    ws = sorted(s["worst"])
    print(f"| {ty} | {s['n']} | {s['within']} | {100 * s['within'] / s['n']:.1f} % | {sum(cov) / len(cov):.3f} | "
          f"{min(cov):.3f} | {100 * sum(c >= 0.95 for c in cov) / len(cov):.1f} % | {ws[len(ws) // 2]:.2f} |")
    alln += s["n"]
    allw += s["within"]
    allcov += cov
    out[ty] = {"n": s["n"], "within": s["within"], "coverage_mean": sum(cov) / len(cov), "coverage_min": min(cov)}
if alln:
    print(f"| **all** | {alln} | {allw} | {100 * allw / alln:.1f} % | {sum(allcov) / len(allcov):.3f} | "
          f"{min(allcov):.3f} | {100 * sum(c >= 0.95 for c in allcov) / len(allcov):.1f} % | |")
for w, cov, spec, key, det, t in sorted(worst_list, key=lambda x: -x[0])[: args.worst]:
    print(f"{spec} {key} worst {w:.1f} coverage {cov:.3f}\n  det   {[(round(x, 1), round(y, 1)) for x, y in det]}"
          f"\n  truth {t}", file=sys.stderr)
if args.json:
    with open(args.json, "w") as f:
        json.dump(out, f, indent=1)
