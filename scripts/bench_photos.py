"""Real codes in motion: ../shared/eval's clips made from real photographs (a pan, a rotation, a zoom, motion blur on
some frames, H.264), Barscope beside the stock zbar element on the same clips, and what the kit does not score:

- the kit's own scores (score_photo_clips.py): frames read right, clips read, misread frames (a wrong text of the
  right symbology), other-symbology and artefact frames, and the photos as stills;
- phantom tracks: `barscope run --tracked` on each clip, every track whose text is not the photo's (a misread that
  became a code of its own: an `appeared` event, a snapshot, a line in a read cycle, a message on a broker);
- boxes on the photo: every detection of `barscope run --every-frame`, whose four corners must lie on the photo as
  the clip placed it (its outline from the truth's centre, angle and zoom, grown by 8 px), never off it.

    python3 scripts/bench_photos.py --barscope .build/release/barscope --out bench-out [--seed N] [--subset-seed K]
                                    [--extras-only]

`--subset-seed` picks which 60 photos of ../shared/testdata/real-photos (rules were chosen on subsets 101, 202, 303
and 404; 505 is held out: docs/accuracy.md), `--seed` how they move. Writes OUT/photos-K-N.json and
OUT/photos-K-N.md. Without ../shared it says so and exits 0.
"""
import argparse, json, math, os, subprocess, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kit_run import run_step  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--barscope", required=True)
p.add_argument("--out", required=True)
p.add_argument("--seed", type=int, default=101)
p.add_argument("--subset-seed", type=int, default=101)
p.add_argument("--extras-only", action="store_true", help="keep the clips and the kit's scores made before")
p.add_argument("--kit", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../shared/eval"))
args = p.parse_args()
kit = os.path.normpath(args.kit)
if not os.path.exists(os.path.join(kit, "photo_clips.py")):
    print(f"bench photos: SKIPPED: no yardstick at {kit} (it comes with ../shared)")
    sys.exit(0)
sys.path.insert(0, kit)
from score_photo_clips import classify  # noqa: E402  (the kit's own judgement of a text)

name = f"photos-{args.subset_seed}-{args.seed}"
work = os.path.abspath(os.path.join(args.out, name))
env = dict(os.environ, SCANBENCH_DIR=work, BARSCOPE=os.path.abspath(args.barscope))
barscope = os.path.abspath(args.barscope)


def run(command):
    return run_step(command, env, "bench photos")


def events(clip, *options):
    r = subprocess.run([barscope, "run", "--input", clip, "--events", "-", "--viewfinder", "off", "--quiet", *options],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]


def outline(truth, frame):
    """The photo's corners in the frame, as photo_clips.py placed it (its angle turns the other way round)."""
    f = truth["frames"][frame]
    w, h = truth["photo_size"]
    s = truth["fit_scale"] * f["zoom"]
    a = -math.radians(f["angle"])
    cx, cy = f["center"]
    return [(cx + x * math.cos(a) - y * math.sin(a), cy + x * math.sin(a) + y * math.cos(a))
            for x, y in ((-w * s / 2, -h * s / 2), (-w * s / 2, h * s / 2), (w * s / 2, h * s / 2), (w * s / 2, -h * s / 2))]


def off_photo(point, corners, grow=8.0):
    """How far a point lies outside the convex outline grown by `grow` px (0 inside)."""
    worst = 0.0
    n = len(corners)
    # Signed distance to each edge's line, outward positive (the outline runs one way round; its sign tells which).
    area = sum(corners[i][0] * corners[(i + 1) % n][1] - corners[(i + 1) % n][0] * corners[i][1] for i in range(n))
    for i in range(n):
        (x0, y0), (x1, y1) = corners[i], corners[(i + 1) % n]
        length = math.hypot(x1 - x0, y1 - y0) or 1
        d = ((x1 - x0) * (point[1] - y0) - (y1 - y0) * (point[0] - x0)) / length
        outward = -d if area > 0 else d
        worst = max(worst, outward - grow)
    return worst


if not args.extras_only:
    run([sys.executable, f"{kit}/photo_clips.py", "--seed", str(args.seed), "--subset-seed", str(args.subset_seed)])
    run([sys.executable, f"{kit}/score_photo_clips.py"])
score = json.load(open(os.path.join(work, "results", "photoclips", "score.json")))
clip_root = os.path.join(work, "photoclips")
rows = []
for folder in sorted(os.listdir(clip_root)):
    index = os.path.join(clip_root, folder, "index.json")
    if not os.path.exists(index):
        continue
    for c in json.load(open(index))["clips"]:
        truth = json.load(open(os.path.join(clip_root, folder, f"{c['name']}.truth.json")))
        clip = os.path.join(clip_root, folder, f"{c['name']}.mp4")
        tracked = [e for e in events(clip, "--tracked") if e.get("event") == "appeared"]
        phantoms = [e["data"] for e in tracked if classify(truth, e.get("type"), e.get("data")) == "misread"]
        boxes = off = 0
        worst = 0.0
        for e in events(clip, "--every-frame"):
            if e.get("event") != "detection" or classify(truth, e.get("type"), e.get("data")) != "hit":
                continue
            corners = outline(truth, e["frame"])
            miss = max(off_photo(pt, corners) for pt in e["polygon"])
            boxes += 1
            off += miss > 0
            worst = max(worst, miss)
        rows.append({"clip": f"{folder}/{c['name']}", "tracks": len(tracked), "phantom_tracks": phantoms,
                     "boxes": boxes, "boxes_off_photo": off, "worst_px": round(worst, 1)})

report = {"subset_seed": args.subset_seed, "seed": args.seed, "kit": score, "clips": rows,
          "phantom_tracks": sum(len(r["phantom_tracks"]) for r in rows), "tracks": sum(r["tracks"] for r in rows),
          "boxes": sum(r["boxes"] for r in rows), "boxes_off_photo": sum(r["boxes_off_photo"] for r in rows)}
json.dump(report, open(os.path.join(args.out, f"{name}.json"), "w"), indent=1)
kit_md = open(os.path.join(work, "results", "photoclips", "score.md")).read()
lines = [f"# Real-photo clips, photos subset {args.subset_seed}, motion seed {args.seed}", "", kit_md.strip(), "",
         "## Barscope's own", "",
         f"- tracks (`--tracked`): {report['tracks']}, of which phantom (a misread text): {report['phantom_tracks']}",
         f"- boxes of right reads (`--every-frame`): {report['boxes']}, with a corner more than 8 px off the photo: "
         f"{report['boxes_off_photo']}"]
worst = sorted(rows, key=lambda r: -r["worst_px"])[:5]
lines += ["- worst boxes: " + "; ".join(f"{r['clip']} {r['worst_px']} px ({r['boxes_off_photo']} of {r['boxes']})"
                                         for r in worst)]
for r in rows:
    if r["phantom_tracks"]:
        lines.append(f"- phantom tracks in {r['clip']}: {', '.join(r['phantom_tracks'])}")
open(os.path.join(args.out, f"{name}.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
