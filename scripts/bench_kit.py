"""Barscope beside the stock zbar element on ../shared/eval, the yardstick written apart from `barscope generate`:
its clips (quick and full profiles, any seed) scanned every frame on the whole frame and in the 4:3 viewfinder,
scored against their truth, per clip and per symbology (recall, partial reads, precision, polygons), the stock
element on the same clips beside it.

    python3 scripts/bench_kit.py --barscope .build/release/barscope --out bench-out [--profiles quick,full]
                                 [--seed N] [--gate]

--gate fails (exit 1) unless, on every profile: polygons fit (every corner within max(3 px, 1.5 modules) of the
bars) on at least 97 % of the detections and on 90 % of each clip's; every symbology's symbol-frames found are at
least the stock element's, whole frame and inside the viewfinder; partial reads are no more than the stock
element's; precision is at least 99.5 %. Without ../shared/eval it says so and exits 0 (`scripts/test` reports the
skip). Writes OUT/kit-SEED.json and OUT/kit-SEED.md.
"""
import argparse, json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kit_run import run_step  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--barscope", required=True)
p.add_argument("--out", required=True)
p.add_argument("--profiles", default="quick,full")
p.add_argument("--seed", type=int, default=101)
p.add_argument("--kit", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../shared/eval"))
p.add_argument("--gate", action="store_true")
args = p.parse_args()
kit = os.path.normpath(args.kit)
if not os.path.exists(os.path.join(kit, "gen.py")):
    print(f"bench kit: SKIPPED: no yardstick at {kit} (it comes with ../shared)")
    sys.exit(0)
os.makedirs(args.out, exist_ok=True)
work = os.path.abspath(os.path.join(args.out, f"scanbench-{args.seed}"))
env = dict(os.environ, SCANBENCH_DIR=work)
barscope = os.path.abspath(args.barscope)


def run(command):
    return run_step(command, env, "bench kit")


def score(profile, label, name="score.json"):
    return json.load(open(os.path.join(work, "results", profile, label, name)))


report = {"seed": args.seed, "profiles": {}}
lines = [f"# Barscope beside the stock zbar element on ../shared/eval, seed {args.seed}", ""]
failures = []
for profile in args.profiles.split(","):
    run([sys.executable, f"{kit}/gen.py", "--profile", profile, "--seed", str(args.seed)])
    run([sys.executable, f"{kit}/peer_gst_zbar.py", "--profile", profile, "--runs", "1"])
    detections = f"python3 {kit}/detections_only.py"
    for label, viewfinder in (("barscope", "off"), ("barscope-vf", "4:3")):
        command = [
            sys.executable, f"{kit}/run_scanner.py", "--profile", profile, "--runs", "1", "--label", label,
            "--cmd", f"{barscope} run --input {{input}} --events - --every-frame --viewfinder {viewfinder} | {detections}",
        ]
        run(command + (["--viewfinder"] if viewfinder != "off" else []))
    whole = score(profile, "barscope")["video"]
    inside = score(profile, "barscope-vf", "score-vf.json")["video"]
    stock = score(profile, "gst-zbar")
    stock_items = {i["name"]: i for i in stock["videos"]}
    report["profiles"][profile] = {"barscope": whole, "barscope_vf": inside, "stock": stock}

    def pct(x):
        return "n/a" if x is None else f"{100 * x:.1f} %"

    def hard(item):
        # The kit's hard symbol-frames (plain ZBar on the frame cannot read them) read, of those there were.
        return f"{item['hard_found']}/{item['hard']}" if "hard" in item and "hard_found" in item else "n/a"

    lines += [f"## {profile} profile", "",
              "| clip | recall | stock | recall in 4:3 | partial reads | stock's | precision | polygons ok | worst polygon in 4:3"
              " | hard read | stock's |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    vf_items = {i["name"]: i for i in inside["items"]}
    for item in whole["items"] + [whole["total"]]:
        name = item["name"]
        s = stock_items.get(name) or (stock["videos_total"] if name == "TOTAL" else {})
        v = vf_items.get(name) or (inside["total"] if name == "TOTAL" else {})
        lines.append(
            f"| {name} | {pct(item.get('recall'))} | {pct(s.get('recall'))} | {pct(v.get('recall'))} | "
            f"{item.get('fp_partial', 0)} | {s.get('fp_partial', 0)} | {pct(item.get('precision'))} | "
            f"{pct(item.get('poly_ok_rate'))} | {pct(v.get('poly_ok_rate'))} | {hard(item)} | {hard(s)} |")
        if name != "TOTAL" and item.get("poly_n") and item["poly_ok_rate"] < 0.90:
            failures.append(f"{profile} {name}: polygons ok {pct(item['poly_ok_rate'])} < 90 %")
    lines += ["", "| symbology | found (whole frame) | stock | found in 4:3 | stock in 4:3 |", "|---|---|---|---|---|"]
    stock_vf = stock["videos_viewfinder_total"]["per_type"]
    for t in sorted(whole["total"]["per_type"]):
        eligible, found = whole["total"]["per_type"][t]
        stock_found = stock["videos_total"]["per_type"].get(t, [eligible, 0])[1]
        vf_eligible, vf_found = inside["total"]["per_type"].get(t, [0, 0])
        vf_stock = stock_vf.get(t, [vf_eligible, 0])[1]
        lines.append(f"| {t} | {found}/{eligible} | {stock_found} | {vf_found}/{vf_eligible} | {vf_stock} |")
        if found < stock_found:
            failures.append(f"{profile} {t}: {found} symbol-frames found, the stock element {stock_found}")
        if vf_found < vf_stock:
            failures.append(f"{profile} {t} in 4:3: {vf_found} symbol-frames found, the stock element {vf_stock}")
    lines.append("")
    for which, total in (("whole frame", whole["total"]), ("4:3", inside["total"])):
        if total.get("poly_n") and total["poly_ok_rate"] < 0.97:
            failures.append(f"{profile} {which}: polygons ok {pct(total['poly_ok_rate'])} < 97 %")
        if total.get("precision") is not None and total["precision"] < 0.995:
            failures.append(f"{profile} {which}: precision {pct(total['precision'])} < 99.5 %")
    if whole["total"].get("fp_partial", 0) > stock["videos_total"].get("fp_partial", 0):
        failures.append(
            f"{profile}: {whole['total']['fp_partial']} partial reads, the stock element "
            f"{stock['videos_total']['fp_partial']}")

text = "\n".join(lines)
print(text)
with open(os.path.join(args.out, f"kit-{args.seed}.md"), "w") as f:
    f.write(text + "\n")
with open(os.path.join(args.out, f"kit-{args.seed}.json"), "w") as f:
    json.dump(report, f, indent=1)
if failures:
    print("\n".join(["", "Below the gates:"] + [f"- {m}" for m in failures]))
    if args.gate:
        sys.exit(1)
