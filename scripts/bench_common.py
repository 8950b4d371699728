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
