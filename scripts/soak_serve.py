"""Soak of the service: the release `barscope serve` with three long-lived instances and one that comes and goes,
a browser-like client on its event stream and an MJPEG reader, for MINUTES; its resident memory, descriptors and
threads sampled every second and judged by scripts/soak.py's judgement (memory: the slope of the baseline over the
last half, at most SLOPE_LIMIT MB a minute; descriptors and threads: flat within soak.FLAT_BOUND).

The instances, on one service with a state folder of its own in a temporary folder:
  tracked    the live demo (1280x720, 30 frames/s), tracked, both engines (ZBar and zxing-cpp), hard codes on;
  rtsp       an RTSP stream from this script's own server (scripts/rtsp_clip_server.py: a generated 1280x720 clip,
             played again and again);
  recording  the live demo at 1920x1080 recorded in 60-s Matroska segments, events to a file (what scripts/soak.py's
             demo soak runs through `barscope run`);
  churn      every CHURN seconds a live 640x360 demo recording an MP4 is started, awaited until it has scanned
             frames, and deleted (the recording finished), its deletion awaited.
A browser-like client reads GET /v1/events?backlog=50 (as the console does, with a browser's headers) the whole run
and checks each instance's events come numbered without a gap and the status arrives each second; an MJPEG reader
reads the tracked instance's stream.mjpg?fps=5 and checks each part is a JPEG.

It fails, with one line, on a breach of the judgement, on the service ending, on a long-lived instance failing,
restarting or standing still, on a short-lived one not starting or not stopping in time, on the event stream or the
MJPEG stream going quiet, or on an event lost. Every wait waits for the thing awaited, with a deadline that fails.
    python3 scripts/soak_serve.py BARSCOPE MINUTES [--samples FILE] [--limit MB_PER_MINUTE]
`--limit` replaces SLOPE_LIMIT: scripts/test's 3-minute run states its own bound (CI_SLOPE_LIMIT there), since three
minutes cannot resolve 0.5 MB a minute under memory plateaus that last minutes (docs/testing.md).
The samples (seconds, rss MB, fds, threads) go to FILE (default: the run's temporary folder); `python3
scripts/soak.py --judge FILE [MB_PER_MINUTE] [--fds N] [--threads N]` judges them again with a leak added.
"""
import http.client, json, os, shutil, signal, subprocess, sys, tempfile, threading, time

import soak

SLOPE_LIMIT = 0.5  # MB per minute over the last half (issue 41)
CHURN = 20.0  # seconds between the short-lived instance's starts
QUIET = 10.0  # seconds without a status on the event stream, an MJPEG frame, or a frame scanned, that fail the run
HERE = os.path.dirname(os.path.abspath(__file__))


class Failed(Exception):
    """The soak has failed: the one line that says why."""


def say(text):
    print(f"soak serve: {text}", flush=True)


def deadline_wait(what, seconds, probe, every=0.1):
    """Calls `probe` until it returns something true, and returns that; raises Failed naming `what` at the deadline.
    The interval is the polling rate; the wait ends on the thing itself."""
    end = time.monotonic() + seconds
    while True:
        got = probe()
        if got:
            return got
        if time.monotonic() >= end:
            raise Failed(f"{what}: not within {seconds:g} s")
        time.sleep(every)


class Service:
    """`barscope serve` on a free loopback port (it says the port in its first line), its standard error kept."""

    def __init__(self, tool, state):
        self.proc = subprocess.Popen([tool, "serve", "--listen", "127.0.0.1:0", "--state", state],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.err = []
        first = self.proc.stderr.readline().decode(errors="replace")
        self.err.append(first)
        if "http://127.0.0.1:" not in first:
            raise Failed(f"barscope serve did not start: {first.strip() or self.proc.wait()}")
        self.port = int(first.split("http://127.0.0.1:")[1].split("/")[0])
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for line in self.proc.stderr:
            self.err.append(line.decode(errors="replace"))
            del self.err[:-50]

    def alive(self):
        return self.proc.poll() is None

    def request(self, method, path, body=None, timeout=40):
        """(status, JSON answer) of one request."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            data = json.dumps(body).encode() if body is not None else None
            c.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
            r = c.getresponse()
            raw = r.read()
            return r.status, (json.loads(raw) if raw[:1] in (b"{", b"[") else raw.decode(errors="replace"))
        finally:
            c.close()

    def create(self, sets):
        status, answer = self.request("POST", "/v1/pipelines/demo/instances", {"set": sets})
        if status != 201:
            raise Failed(f"POST /v1/pipelines/demo/instances {sets}: {status} {answer}")
        return answer["id"]

    def status(self, id):
        status, answer = self.request("GET", f"/v1/instances/{id}")
        if status != 200:
            raise Failed(f"GET /v1/instances/{id}: {status} {answer}")
        if answer["state"] in ("failed", "completed", "stopped") or answer["restarts"]:
            raise Failed(f"{id} {answer['state']}, {answer['restarts']} restarts: {answer.get('error')}")
        return answer

    def delete(self, id):
        """Stops an instance; its final status (the answer comes once it has stopped: recording finished)."""
        status, answer = self.request("DELETE", f"/v1/instances/{id}")
        if status != 200 or answer.get("state") != "stopped":
            raise Failed(f"DELETE /v1/instances/{id}: {status} {answer}")
        gone, _ = self.request("GET", f"/v1/instances/{id}")
        if gone != 404:
            raise Failed(f"{id} still listed after DELETE ({gone})")
        return answer


class Reader(threading.Thread):
    """A streaming reader on its own thread; `problem` holds what went wrong, `last` when something last came."""

    def __init__(self, port, path):
        super().__init__(daemon=True)
        self.port, self.path = port, path
        self.problem = None
        self.last = time.monotonic()
        self.stopping = False
        self.conn = None

    def open(self, headers):
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        self.conn.request("GET", self.path, headers=headers)
        r = self.conn.getresponse()
        if r.status != 200:
            raise Failed(f"GET {self.path}: {r.status}")
        return r

    def stop(self):
        self.stopping = True
        if self.conn and self.conn.sock:
            try:
                self.conn.sock.shutdown(2)
            except OSError:
                pass

    def run(self):
        try:
            self.read()
        except Exception as e:  # noqa: BLE001 (any end of the stream before we stop it is the failure reported)
            if not self.stopping:
                self.problem = f"{self.path}: {type(e).__name__}: {e}"
        else:
            if not self.stopping:
                self.problem = f"{self.path}: the stream ended"


class Events(Reader):
    """A browser's EventSource on the console's one stream: Accept text/event-stream, no cache, the page as referrer;
    parses the stream by the SSE rules (fields, a blank line dispatches). Counts events and statuses, checks each
    instance's `seq` follows the one before, and keeps the newest statuses and every instance id seen."""

    def __init__(self, port):
        super().__init__(port, "/v1/events?backlog=50")
        self.events = self.statuses = self.gaps = 0
        self.seq = {}
        self.seen = set()
        self.latest = []
        self.lock = threading.Lock()

    def read(self):
        r = self.open({"Accept": "text/event-stream", "Cache-Control": "no-cache",
                       "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) barscope-soak",
                       "Referer": f"http://127.0.0.1:{self.port}/", "Accept-Language": "en"})
        kind, data = "message", []
        while not self.stopping:
            line = r.readline()
            if not line:
                return
            line = line.decode().rstrip("\r\n")
            if line == "":
                if data:
                    self.dispatch(kind, "\n".join(data))
                kind, data = "message", []
            elif line.startswith(":"):
                continue
            else:
                field, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if field == "event":
                    kind = value
                elif field == "data":
                    data.append(value)

    def dispatch(self, kind, data):
        item = json.loads(data)
        with self.lock:
            self.last = time.monotonic()
            if kind == "status":
                self.statuses += 1
                self.latest = item
                self.seen.update(s["id"] for s in item)
                return
            self.events += 1
            instance, seq = item["instance"], item["seq"]
            self.seen.add(instance)
            before = self.seq.get(instance)
            if before is not None and seq != before + 1:
                self.gaps += 1
                self.problem = self.problem or f"/v1/events: {instance} event {seq} after {before} (lost or repeated)"
            self.seq[instance] = seq


class MJPEG(Reader):
    """Reads multipart/x-mixed-replace part by part (boundary, headers, Content-Length bytes) and counts the JPEGs."""

    def __init__(self, port, instance):
        super().__init__(port, f"/v1/instances/{instance}/stream.mjpg?fps=5")
        self.frames = 0

    def read(self):
        r = self.open({"Accept": "multipart/x-mixed-replace,image/*"})
        while not self.stopping:
            line = r.readline()
            if not line:
                return
            if line.strip() != b"--barscope-frame":
                continue
            length = None
            while True:
                header = r.readline()
                if not header:
                    return
                if header in (b"\r\n", b"\n"):
                    break
                name, _, value = header.decode().partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if length is None:
                raise Failed("an MJPEG part without Content-Length")
            jpeg = r.read(length)
            if len(jpeg) < length:
                return
            if not (jpeg.startswith(b"\xff\xd8") and jpeg.rstrip(b"\r\n").endswith(b"\xff\xd9")):
                raise Failed(f"MJPEG part {self.frames + 1} is not a JPEG")
            self.frames += 1
            self.last = time.monotonic()


class Churn(threading.Thread):
    """Every CHURN seconds: start a short-lived instance, wait until it has scanned frames, delete it and wait for
    its final status; counts what it created and deleted."""

    def __init__(self, service, work):
        super().__init__(daemon=True)
        self.service, self.work = service, work
        self.created = self.deleted = 0
        self.ids = []
        self.problem = None
        self.stopping = threading.Event()

    def run(self):
        try:
            while not self.stopping.is_set():
                started = time.monotonic()
                recording = os.path.join(self.work, f"churn-{self.created}.mp4")
                id = self.service.create({"source.live": True, "source.frames": 0, "source.size": "640x360",
                                          "record.path": recording})
                self.created += 1
                self.ids.append(id)
                deadline_wait(f"{id} scanning", 30, lambda: self.service.status(id)["frames"] >= 15)
                self.service.delete(id)
                self.deleted += 1
                if not os.path.getsize(recording):
                    raise Failed(f"{id}: its recording {recording} is empty")
                os.remove(recording)
                # The schedule: the next one CHURN seconds after this one started (an interval, not a wait).
                self.stopping.wait(max(0.0, CHURN - (time.monotonic() - started)))
        except Exception as e:  # noqa: BLE001
            self.problem = f"short-lived instance: {e}"


def sample(pid):
    rss = next(int(l.split()[1]) for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS")) / 1024
    return rss, len(os.listdir(f"/proc/{pid}/fd")), len(os.listdir(f"/proc/{pid}/task"))


def rtsp_server(tool, work):
    """The RTSP server on a generated 1280x720 clip (H.264 without B-frames, as Annex B), and its URL."""
    mp4, h264 = os.path.join(work, "rtsp.mp4"), os.path.join(work, "rtsp.h264")
    subprocess.run([tool, "generate", mp4, "--size", "1280x720", "--frames", "300"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run(["gst-launch-1.0", "-q", "filesrc", f"location={mp4}", "!", "qtdemux", "!", "h264parse", "!",
                    "video/x-h264,stream-format=byte-stream,alignment=au", "!", "filesink", f"location={h264}"],
                   check=True)
    server = subprocess.Popen(["/usr/bin/python3", os.path.join(HERE, "rtsp_clip_server.py"), h264, "0"],
                              stdout=subprocess.PIPE, text=True)
    url = server.stdout.readline().strip()
    if not url.startswith("rtsp://"):
        server.kill()
        raise Failed("the RTSP server did not start (python3-gi, gir1.2-gst-rtsp-server-1.0)")
    return server, url


def soak_run(tool, minutes, samples_path):
    work = tempfile.mkdtemp(prefix="barscope-soak-serve-")
    samples_path = samples_path or os.path.join(work, "samples.tsv")
    samples, figures = [], {}
    rtsp, url = rtsp_server(tool, work)
    service = Service(tool, os.path.join(work, "state"))
    readers, churn = [], None
    try:
        ids = {
            "tracked": service.create({"source.live": True, "source.frames": 0, "source.size": "1280x720",
                                       "decoder.tracked": True, "decoder.engine": "both",
                                       "decoder.hard-codes": True}),
            "rtsp": service.create({"source.input": url, "source.rtsp-transport": "tcp"}),
            "recording": service.create({"source.live": True, "source.frames": 0, "source.size": "1920x1080",
                                         "record.path": os.path.join(work, "recording.mkv"),
                                         "record.segment-seconds": 60,
                                         "events.path": os.path.join(work, "recording.jsonl")}),
        }
        for name, id in ids.items():
            deadline_wait(f"{name} ({id}) reading codes", 60, lambda: service.status(id)["codes"] >= 1)
        say("instances " + ", ".join(f"{n} {i}" for n, i in ids.items()) + " read codes; sampling")
        events, mjpeg = Events(service.port), MJPEG(service.port, ids["tracked"])
        readers = [events, mjpeg]
        for r in readers:
            r.start()
        deadline_wait("the first status on /v1/events", 10, lambda: events.statuses)
        deadline_wait("the first MJPEG frame", 10, lambda: mjpeg.frames)
        churn = Churn(service, work)
        churn.start()

        start = time.monotonic()
        until = minutes * 60
        progress = {}  # instance: (frames_in, when it last grew)
        while True:
            now = time.monotonic() - start
            if now >= until and not (until == minutes * 60 and soak.over_limit(samples, SLOPE_LIMIT)):
                break
            if now >= until:
                until += soak.EXTRA
                say(f"slope over the limit at {minutes:g} min; {soak.EXTRA:.0f} s more, judged again")
            time.sleep(soak.EVERY)  # the sampling interval of the figures, not a wait
            if not service.alive():
                raise Failed(f"barscope serve ended ({service.proc.returncode}): {''.join(service.err)[-300:]}")
            for r in readers + [churn]:
                if r.problem:
                    raise Failed(r.problem)
            for r, what in ((events, "status on /v1/events"), (mjpeg, "MJPEG frame")):
                if time.monotonic() - r.last > QUIET:
                    raise Failed(f"no {what} for {QUIET:g} s")
            with events.lock:
                latest = {s["id"]: s for s in events.latest}
            for name, id in ids.items():
                s = latest.get(id)
                if s is None or s["state"] in ("failed", "completed", "stopped") or s["restarts"]:
                    raise Failed(f"{name} ({id}): " + (f"{s['state']}, {s['restarts']} restarts, error {s['error']}"
                                                       if s else "gone from the statuses"))
                seen, when = progress.get(id, (-1, time.monotonic()))
                if s["frames_in"] > seen:
                    progress[id] = (s["frames_in"], time.monotonic())
                elif time.monotonic() - when > QUIET:
                    raise Failed(f"{name} ({id}): no frame in for {QUIET:g} s ({s['state']})")
            t = time.monotonic() - start
            samples.append((t,) + sample(service.proc.pid))
            if len(samples) % 30 == 0:
                _, rss, fds, threads = samples[-1]
                say(f"{t:5.0f} s  rss {rss:6.1f} MB  fds {fds}  threads {threads}  churned {churn.deleted}  "
                    f"events {events.events}  mjpeg {mjpeg.frames}")
        churn.stopping.set()
        churn.join(60)
        if churn.is_alive() or churn.problem:
            raise Failed(churn.problem or "the short-lived instance's last round did not end within 60 s")
        final = {name: service.status(id) for name, id in ids.items()}
        for r in readers:
            r.stop()
        if events.problem or mjpeg.problem:
            raise Failed(events.problem or mjpeg.problem)
        missing = [i for i in churn.ids if i not in events.seen]
        if missing:
            raise Failed(f"the event stream never showed {len(missing)} short-lived instances: {missing[:3]}")
        for name, id in ids.items():
            service.delete(id)
        figures = {"created": churn.created + 3, "deleted": churn.deleted + 3, "churned": churn.deleted,
                   "events": events.events, "statuses": events.statuses, "mjpeg": mjpeg.frames,
                   "codes": {n: s["codes"] for n, s in final.items()},
                   "dropped": {n: f"{s['frames_dropped']}/{s['frames_in']}" for n, s in final.items()},
                   "segments": len([f for f in os.listdir(work) if f.startswith("recording-")]),
                   "recorded_mb": sum(os.path.getsize(os.path.join(work, f)) for f in os.listdir(work)
                                      if f.startswith("recording-")) / 1e6}
    finally:
        for r in readers:
            r.stop()
        if churn:
            churn.stopping.set()
        if service.alive():
            service.proc.send_signal(signal.SIGTERM)  # stops every instance, recordings finished; exits 0
            try:
                service.proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                service.proc.kill()
        rtsp.kill()
        rtsp.wait()
        if samples:
            soak.write_samples(samples_path, samples, "serve", SLOPE_LIMIT)
            say(f"samples in {samples_path}")
    if service.proc.returncode != 0:
        raise Failed(f"barscope serve exited {service.proc.returncode} on SIGTERM: {''.join(service.err)[-300:]}")
    # A run that passed keeps its samples and events, not its hundreds of MB of video or the service's state.
    shutil.rmtree(os.path.join(work, "state"), ignore_errors=True)
    for f in os.listdir(work):
        if f.endswith((".mkv", ".mp4", ".h264")):
            os.remove(os.path.join(work, f))
    return samples, figures


def main(argv):
    global SLOPE_LIMIT
    tool, minutes = argv[0], float(argv[1])
    if "--limit" in argv:
        SLOPE_LIMIT = float(argv[argv.index("--limit") + 1])
    samples_path = argv[argv.index("--samples") + 1] if "--samples" in argv else None
    try:
        samples, figures = soak_run(tool, minutes, samples_path)
    except Failed as e:
        sys.exit(f"soak serve: FAIL: {e}")
    judged, breaches = soak.verdict(samples, SLOPE_LIMIT)
    if judged:
        say(f"{minutes:g} min, {soak.describe(judged)}")
    say(f"instances created {figures['created']}, deleted {figures['deleted']} ({figures['churned']} short-lived); "
        f"events read {figures['events']} (and {figures['statuses']} statuses); MJPEG frames {figures['mjpeg']}; "
        f"codes {figures['codes']}; dropped/in {figures['dropped']}; recording segments {figures['segments']} "
        f"({figures['recorded_mb']:.0f} MB); "
        f"exit 0 on SIGTERM")
    if breaches:
        sys.exit("soak serve: FAIL: " + "; ".join(breaches))
    say("PASS")


if __name__ == "__main__":
    main(sys.argv[1:])
