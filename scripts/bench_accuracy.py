"""Accuracy on the real-photo set (../shared/testdata/real-photos and its manifest.json), from scratch: every image
through zbarimg and through `barscope scan` with each engine (both, zbar, zxing), scored against the manifest's
expected text, and printed in docs/accuracy.md's two tables.

- The table by format counts an image as read when the expected text is among its reads, and as misread when it
  gave texts but not the expected one.
- The halves (the split of Tests/PipelineTests/RealPhotoTests.swift: zxing-cpp's odd-numbered sample folders and
  the reference images choose, the even-numbered folders check) count strictly: read when every text that came out
  is the expected one, misread when any other text came out.

Writes bench-out/accuracy.json (every image's texts from every reader) and bench-out/accuracy.md (the tables).
"""
import argparse, base64, json, os, platform, re, subprocess, sys, time

p = argparse.ArgumentParser()
p.add_argument("--barscope", required=True)
p.add_argument("--out", required=True)
p.add_argument("--set", default=os.path.join(os.path.dirname(__file__), "../../shared/testdata/real-photos"))
args = p.parse_args()
os.makedirs(args.out, exist_ok=True)
folder = os.path.normpath(args.set)
manifest_path = os.path.join(folder, "manifest.json")
if not os.path.exists(manifest_path):
    sys.exit(f"bench accuracy: no real-photo set at {folder} (it comes with ../shared)")
images = json.load(open(manifest_path))["images"]
formats = json.load(open(manifest_path))["formats"]

def half(image):
    """choosing or checking, as RealPhotoTests.half(of:) splits them."""
    parts = image["source"]["path"].split("/")
    if image["kind"] != "zxing-blackbox" or len(parts) < 3 or "-" not in parts[2]:
        return "choosing"
    try:
        n = int(parts[2].rsplit("-", 1)[1])
    except ValueError:
        return "choosing"
    return "checking" if n % 2 == 0 else "choosing"

def zbarimg(path):
    """zbarimg's texts for one image, as `--raw` prints them (the text converted as zbarimg converts it), cut into
    its symbols by the lengths `--xml` gives (each symbol's text is followed by a newline; a text may hold
    newlines itself, so the lines alone would not say where one ends)."""
    raw = subprocess.run(["zbarimg", "--raw", "-q", path], capture_output=True)
    if raw.returncode not in (0, 4) or not raw.stdout:
        return []
    xml = subprocess.run(["zbarimg", "--xml", "-q", path], capture_output=True).stdout
    lengths = []
    for m in re.finditer(rb"<data( format='base64' length='(\d+)')?><!\[CDATA\[(.*?)\]\]></data>", xml, re.S):
        if m.group(1):
            lengths.append(int(m.group(2)))
        else:  # zbarimg cuts a "]]>" in the text into two CDATA sections
            lengths.append(len(m.group(3).replace(b"]]]]><![CDATA[>", b"]]>")))
    out, at = [], 0
    for n in lengths:
        out.append(raw.stdout[at:at + n])
        at += n + 1
    if at != len(raw.stdout):  # the lengths do not cut the raw text: one symbol per line
        out = raw.stdout.rstrip(b"\n").split(b"\n")
    return [t.decode("utf-8", "replace") for t in out]

def barscope(engine, paths):
    """barscope scan's texts per image, all images in one process; one process per image if that one fails."""
    def run(batch):
        r = subprocess.run([args.barscope, "scan", "--json", "--engine", engine] + batch, capture_output=True,
                           text=True)
        if r.returncode not in (0, 4):
            return None, r.stderr.strip()
        got = {path: [] for path in batch}
        for line in r.stdout.splitlines():
            e = json.loads(line)
            if "files" in e:  # a structured append's joined message, printed after the last image
                continue
            text = e.get("data")
            if text is None and "data_base64" in e:
                text = base64.b64decode(e["data_base64"]).decode("utf-8", "replace")
            got[e["file"]].append(text)
        return got, None
    got, error = run(paths)
    if got is not None:
        return got
    print(f"bench accuracy: scan --engine {engine} of all images failed ({error[-200:]}); one by one",
          file=sys.stderr)
    got = {}
    for path in paths:
        one, error = run([path])
        if one is None:
            print(f"bench accuracy: {path}: {error}", file=sys.stderr)
        got[path] = (one or {}).get(path, [])
    return got

paths = [os.path.join(folder, i["file"]) for i in images]
readers = [("barscope scan (both)", "both"), ("zbar engine + passes", "zbar"), ("zxing engine", "zxing"),
           ("zbarimg", None)]
texts, seconds = {}, {}
for name, engine in readers:
    start = time.monotonic()
    if engine is None:
        texts[name] = {path: zbarimg(path) for path in paths}
    else:
        texts[name] = barscope(engine, paths)
    seconds[name] = time.monotonic() - start
    print(f"bench accuracy: {name}: {len(paths)} images in {seconds[name]:.0f} s", file=sys.stderr)

def lenient(image, got):
    """'read' when the expected text is among the reads, 'misread' when texts came but not it, else None."""
    if image["expected"] in got:
        return "read"
    return "misread" if got else None

def strict(image, got):
    """'read' when every text that came out is the expected one, 'misread' when any other text came out."""
    if not got:
        return None
    return "read" if all(t == image["expected"] for t in got) else "misread"

def pct(n, of):
    return f"{100 * n / of:.1f} %" if of else "-"

# The table by format, docs/accuracy.md's first.
lines = ["| format | images | " + " | ".join(name for name, _ in readers) + " |",
         "|" + " --- |" * (2 + len(readers))]
# In docs/accuracy.md's order: QR first, then the retail codes, then the industrial ones; any other format after them.
readme_order = ["qrcode", "ean13", "ean8", "upca", "upce", "code128", "code39", "itf"]
for f in [f for f in readme_order if f in formats] + [f for f in formats if f not in readme_order]:
    these = [(i, p) for i, p in zip(images, paths) if i["format"] == f]
    cells = [str(sum(lenient(i, texts[name][p]) == "read" for i, p in these)) for name, _ in readers]
    lines.append(f"| {f} | {len(these)} | " + " | ".join(cells) + " |")
cells = []
for k, (name, _) in enumerate(readers):
    verdicts = [lenient(i, texts[name][p]) for i, p in zip(images, paths)]
    read, wrong = verdicts.count("read"), verdicts.count("misread")
    cells.append(f"**{read} ({pct(read, len(images))})**, {wrong} misread" if k == 0 else f"{read}, {wrong} misread")
lines.append(f"| **all** | {len(images)} | " + " | ".join(cells) + " |")
by_kind = {}
for i, p in zip(images, paths):
    n = by_kind.setdefault(i["kind"], [0, 0])
    n[1] += 1
    n[0] += lenient(i, texts[readers[0][0]][p]) == "read"
lines.append("")
lines.append("By source (barscope scan, both): " + ", ".join(f"{k} {n[0]} of {n[1]}" for k, n in sorted(by_kind.items())))

# The halves, strictly, in docs/accuracy.md's format (barscope scan's both engines), then every reader's totals.
lines.append("")
lines.append("| half | images | read | misread | " + " | ".join(formats) + " |")
lines.append("|" + " --- |" * (4 + len(formats)))
halves = {}
for h, title in [("choosing", "choosing (odd folders, references)"), ("checking", "checking (even folders)")]:
    these = [(i, p) for i, p in zip(images, paths) if half(i) == h]
    row = {}
    for name, _ in readers:
        verdicts = [strict(i, texts[name][p]) for i, p in these]
        per_format = {f: (sum(strict(i, texts[name][p]) == "read" for i, p in these if i["format"] == f),
                          sum(i["format"] == f for i, _ in these)) for f in formats}
        row[name] = {"images": len(these), "read": verdicts.count("read"), "misread": verdicts.count("misread"),
                     "formats": per_format}
    halves[h] = row
    both = row[readers[0][0]]
    cells = [f"{n}/{of}" if of else "" for n, of in both["formats"].values()]
    lines.append(f"| {title} | {both['images']} | {both['read']} ({pct(both['read'], both['images'])}) | "
                 f"{both['misread']} | " + " | ".join(cells) + " |")
lines.append("")
lines.append("| half (strict) | images | " + " | ".join(name for name, _ in readers) + " |")
lines.append("|" + " --- |" * (2 + len(readers)))
for h in ["choosing", "checking"]:
    row = halves[h]
    cells = [f"{row[name]['read']}, {row[name]['misread']} misread" for name, _ in readers]
    lines.append(f"| {h} | {row[readers[0][0]]['images']} | " + " | ".join(cells) + " |")

machine = f"{platform.node()}, {os.cpu_count()} cores, {platform.machine()}"
stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
table = "\n".join(lines)
print(f"real-photo set: {len(images)} images, measured {stamp} on {machine}")
print(table)
with open(os.path.join(args.out, "accuracy.md"), "w") as f:
    f.write(f"measured {stamp} on {machine}\n\n{table}\n")
with open(os.path.join(args.out, "accuracy.json"), "w") as f:
    json.dump({"date": stamp, "machine": machine, "seconds": seconds, "halves": halves,
               "images": [{"file": i["file"], "format": i["format"], "expected": i["expected"], "half": half(i),
                           "reads": {name: texts[name][p] for name, _ in readers}}
                          for i, p in zip(images, paths)]}, f, indent=1, ensure_ascii=False)
