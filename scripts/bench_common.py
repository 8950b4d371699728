"""What the benchmarks share: timing a command, the decode pipeline, reading both scanners' reads, scoring."""
import json, re, subprocess, sys


def timed(cmd):
    """Runs cmd under /usr/bin/time; returns (wall s, peak RSS MB, cpu s, stdout)."""
    fmt = "BENCH %e %M %U %S"
    r = subprocess.run(["/usr/bin/time", "-f", fmt] + cmd, capture_output=True, text=True)
    line = [l for l in r.stderr.splitlines() if l.startswith("BENCH ")]
    if r.returncode != 0 or not line:
        sys.exit(f"bench: {' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()[-400:]}")
    _, wall, rss, user, system = line[-1].split()
    return float(wall), int(rss) / 1024, float(user) + float(system), r.stdout

def decode_pipeline(clip, extra):
    return ["gst-launch-1.0", "-m", "filesrc", f"location={clip}", "!", "qtdemux", "!", "h264parse", "!",
            "avdec_h264", "!"] + extra

def stock_detections(stdout, first_pts, frame_ns):
    """Frame-indexed (type, data) from gst-launch -m output of the stock zbar element."""
    found = []
    for line in stdout.splitlines():
        if "barcode" not in line:
            continue
        ts = re.search(r"timestamp=\(guint64\)(\d+)", line)
        ty = re.search(r"type=\(string\)([^,]+)", line)
        sy = re.search(r'symbol=\(string\)(?:"((?:[^"\\]|\\.)*)"|([^,]+))', line)
        if not (ts and ty and sy):
            continue
        data = sy.group(1) if sy.group(1) is not None else sy.group(2)
        data = data.replace('\\"', '"').replace("\\\\", "\\")
        frame = round((int(ts.group(1)) - first_pts) / frame_ns)
        found.append((frame, ty.group(1), data))
    return found

def barscope_detections(stdout):
    found, first_pts = [], None
    for line in stdout.splitlines():
        e = json.loads(line)
        if e["event"] == "detection":
            found.append((e["frame"], e["type"], e["data"]))
            if e["frame"] == 0 and first_pts is None:
                first_pts = e["pts_ns"]
    return found, first_pts

def score(found, truth, inside_only):
    expected = set()
    for t in truth:
        for c in t["codes"]:
            if not inside_only or c["in_viewfinder"]:
                expected.add((t["frame"], c["type"], c["data"]))
    got = set(found)
    hits = len(got & expected)
    return (hits / len(expected) if expected else 0.0, hits / len(got) if got else 1.0, len(got - expected))


def gtin_check(d):
    s = sum(int(c) * (3 if i % 2 == 0 else 1) for i, c in enumerate(reversed(d)))
    return str((10 - s % 10) % 10)


def upce_to_ean13(e):
    """A UPC-E's eight digits as ZBar reports them by default: the EAN-13 of the UPC-A it stands for."""
    ns, m = e[0], e[1:7]
    last = m[5]
    if last in "012":
        a = ns + m[0] + m[1] + last + "0000" + m[2] + m[3] + m[4]
    elif last == "3":
        a = ns + m[0] + m[1] + m[2] + "00000" + m[3] + m[4]
    elif last == "4":
        a = ns + m[0] + m[1] + m[2] + m[3] + "00000" + m[4]
    else:
        a = ns + m[0:5] + "0000" + last
    return "0" + a + gtin_check(a)


def normalise(ty, data):
    """The stock element enables every symbology (UPC-A, UPC-E, ISBN): name its reads as ZBar's defaults do."""
    if ty == "UPC-A":
        return "EAN-13", "0" + data
    if ty == "UPC-E":
        return "EAN-13", upce_to_ean13(data)
    if ty == "ISBN-13":
        return "EAN-13", data
    return ty, data
