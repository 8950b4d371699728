enum Help {
    static let version = "barscope 0.1.0"

    static let main = """
        barscope: barcode scanning for video, on GStreamer and ZBar.

        Usage:
          barscope run [NAME|FILE.conf|demo|FILE|URI] [options]
                                                   scan a video, camera or stream; draw, record, report
          barscope pipelines                       the named pipelines (pipelines/NAME.conf) and their purpose
          barscope validate FILE.conf...           check pipeline files without running them
          barscope scan IMAGE... [--json] [-S CONFIG]...
                                                   scan still images, like zbarimg
          barscope search [CODE] [options]         where and when a code was seen: the sightings index
          barscope index PATH... [options]         scan recordings already made into the sightings index
          barscope generate OUT.mp4 [options]      write a demo clip (and its truth) for tests and benchmarks
                                                   (.mp4, .mkv or .webm)
          barscope serve [--listen HOST:PORT]      a service running many pipelines at once, over HTTP
          barscope --help | --version

        Examples:
          barscope run demo --record demo.mp4      annotated demo video, events on standard output
          barscope run clip.mp4 --viewfinder off --every-frame --events codes.jsonl
          barscope scan label.png --json

        Exit codes: 0 success; 2 bad usage or bad input; 3 the pipeline failed while running;
        4 'scan' found no code; 128+N stopped by signal N (after finishing the recording).

        'barscope COMMAND --help' tells more.
        """

    static let serve = """
        Usage: barscope serve [--listen HOST:PORT] [--token-file FILE] [--state DIR] [--pipelines DIR] [--index FILE|URL]
                              [--publish URL]... [--node NAME] [--spool DIR] [--spool-max SIZE] [--keep-days N]

        A long-running service that runs many named pipelines at once, controlled over HTTP (JSON), with a web
        console at its address (http://127.0.0.1:8080/ by default): start pipelines, watch each one live, drag its
        viewfinder, follow its events. With --token-file the page asks for the token.

        Options:
          --listen HOST:PORT   where to listen (default 127.0.0.1:8080); an address other than loopback
                               needs --token-file
          --token-file FILE    every request then needs 'Authorization: Bearer TOKEN' (one word, 16+ characters)
          --state DIR          the instances to bring back after a restart (default $STATE_DIRECTORY,
                               $XDG_STATE_HOME/barscope or ~/.local/state/barscope)
          --pipelines DIR      named pipelines looked up here first
          --index FILE|URL     the sightings index every instance adds to (default: sightings.sqlite in the
                       state folder; postgresql://... to share one between nodes)
          --keep-days N        at the start and every hour: sightings older than N days deleted, with the
                               recordings and snapshots they named and the instances' older ones (never a
                               file still being written)
          --publish URL        every instance's events also to a broker (as for run: mqtt://, mqtts://,
                               kafka://), one connection each, shared; --node, --spool, --spool-max as for run

        API:
          GET    /v1/pipelines                         the named pipelines
          POST   /v1/pipelines/NAME/instances          {"set": {"source.input": "clip.mp4"}} -> 201 {"id": ...}
          GET    /v1/instances[/ID]                    status: state, frames, fps, latency, codes, restarts, error
          POST   /v1/instances/ID/control              {"command": "viewfinder 16:9 animate 8"} (as --control)
          DELETE /v1/instances/ID                      stop (recording finished), the final status
          POST   /v1/instances/ID/cycles               {"label": "parcel 17"}: a read cycle opens; DELETE closes it
          GET    /v1/instances/ID/events               Server-Sent Events (Last-Event-ID or ?since=N resumes)
          GET    /v1/instances/ID/frame.jpg            the newest annotated frame
          GET    /v1/instances/ID/stream.mjpg?fps=N    the annotated stream as MJPEG (default 5 frames/s)
          GET    /v1/instances/ID/snapshots/FILE       a PNG that snapshots.folder received
          GET    /v1/sightings?code=C                  where and when C was seen (also prefix=, from=, to=,
                                               instance=, limit=, cursor= for the next page, format=csv)
          GET    /v1/cycles?result=noread              read cycles' results, newest first (also label=, instance=,
                                               from=, to=, limit=, format=csv)
          GET    /v1/events?backlog=N                  every instance's events, and each second their status
          GET    /v1/pool                              the shared scanning pool: workers, busy, queued, streams
          GET    /v1/openapi.json                      this API as an OpenAPI 3.1 document (every route and answer)
          GET    /                                     the console
          GET    /metrics                              Prometheus text
          GET    /healthz                              ok

        SIGTERM stops every instance with its recording finished, then exits 0; the instances come back at the
        next start.
        """

    static let run = """
        Usage: barscope run [NAME|FILE.conf|demo|FILE|URI] [options]

        Scans every frame of a source, reports codes as JSON Lines, and draws the viewfinder and each
        code (box, corner polygon, label) on the video it records or shows.

        NAME runs the named pipeline NAME.conf, found in $BARSCOPE_PIPELINES, ./pipelines,
        ~/.config/barscope/pipelines or the pipelines shipped with barscope; every option below
        overrides it, and so does --set SECTION.KEY=VALUE (e.g. --set viewfinder.aspect-ratio=16:9).

        Source (default: demo):
          --input SRC            demo, a video file (MP4, MKV, WebM, ...), a still image (PNG, JPEG, ...),
                                 a URI (file://, rtsp://...) or a camera (/dev/videoN)
          --size WxH             demo frame size (default 1280x720); a camera's size (default: the
                                 largest it offers)
          --fps N                demo frame rate (default 30); a camera's rate (default: the highest it
                                 offers up to 30); a still image's repeat rate (default 30)
          --format F             a camera's pixel format: YUY2, NV12, MJPG, ... (default: raw when it
                                 gives the size and rate, else MJPG); a camera that cannot give what is
                                 asked stops with a line saying what it offers
          --frames N             demo length in frames, 0 = until stopped (default 300); a still image
                                 is one frame, scanned once, unless --frames repeats it (a recording of
                                 N frames at --fps)
          --live                 pace the demo like a camera instead of as fast as possible
          --scene conveyor       the demo as parcels on a belt (for read cycles) instead of moving codes
          --rtsp-transport T     RTSP over tcp or udp (default: udp, then tcp)
          --latency MS           RTSP jitter buffer in milliseconds
          --reconnect-attempts N when an RTSP source fails, rebuild and retry N times (default 10, 0 = for
                                 ever), waiting 1, 2, 4 ... 30 s; events reconnecting, recovered, gave-up

        Scanning:
          --viewfinder W:H|off   region of interest: the largest W:H rectangle inside the insets, centred
                                 (default 4:3); only codes inside it are read; 'off' = whole frame
          --insets N|T,L,B,R     the viewfinder's minimum distance from the frame edges (default 20 px)
          --preferred-height N   keep this height (and the ratio) when it fits; ignored when it does not
          --region X,Y,W,H       the region as fractions of the frame instead (0.1,0.2,0.8,0.6)
          --secondary W:H        a second, dashed region of this ratio inside the first (a guide)
          --secondary-insets N|T,L,B,R   its distance from the first (default 10 px)
          -S CONFIG              decoder setting in zbarimg syntax, repeatable:
                                 -Sdisable -Sqrcode.enable, -Si25.disable, -Sean13.enable=0
          --scan-threads N       scanning threads, one ZBar scanner each (default: one per core); a
                                 file gives the same events with any number (in tracked mode and with
                                 --hard-codes its frames are scanned in order, one at a time)
          --tracked              search only every 4th frame (where the picture changed; the whole region
                                 every 32nd) and, in between, rescan just around the codes last seen (moved
                                 by their velocity); a new code is reported within 3 frames
          --search-every N       tracked mode with a full search every N frames (default 4)
          --search-lines N       tracked mode's searches along every N-th row and column (default 4)
          --whole-search-every N tracked mode's searches read only where the picture changed since the one
                                 before, and the whole frame every N-th (default 8; 1: always whole)
          --hard-codes on|off    read 1D codes too faint, small or blurred for ZBar where the frame has bars
                                 no read explains, in video also averaged over the frames (default off;
                                 docs/performance.md has its cost)
          --engine E             decoding engine: zbar (default, fastest), zxing (zxing-cpp: also DataMatrix,
                                 Aztec, PDF417, Micro QR) or both (results cross-checked)

        Output:
          --events PATH|-        JSON Lines events to a file or standard output (default: -)
          --every-frame          one 'detection' event per code per frame instead of 'appeared'/'lost'
          --report tracks|once|after:MS   how often a code is reported: each time it comes into view
                                 (default), once per run, or again only after MS ms of stream time
          --confirm-frames N     a 1D read that one scan line made is reported once the same text is read at
                                 the same place in N frames (within 15; default 2: a blurred misread seldom
                                 repeats), each read then with its own frame; 2D codes and reads several lines
                                 agreed on at once; a read of another text where a code is being tracked is
                                 dropped; 1 reports every read
          --record PATH          record the annotated video, H.264 in PATH.mp4 (fragmented: a killed run
                                 leaves a playable file) or PATH.mkv
          --segment N            with --record: a new file every N seconds, PATH-00000.mp4, -00001, ...
          --display              show the annotated video in a window
          --serve-rtsp H:P/PATH  serve the annotated video over RTSP (127.0.0.1:8554/dock; loopback
                                 unless a host is given)
          --snapshots DIR        save the annotated frame as PNG each time a new code appears
          --style KEY=VALUE      overlay style, repeatable: line-color, line-width, corner-radius,
                                 mask-color, box-color, box-width, box-fill, polygon-color,
                                 polygon-width, polygon-fill, outline-gap, font, label-size,
                                 label-color, label-background, labels (on/off), status (on/off),
                                 label-format ('{data} {type} {quality}'); colours #RRGGBB[AA] or none
          --no-status            no status line (frame, codes in view and seen, frames/s)
          --quiet                no progress or summary line on standard error (by default a progress bar
                                 on a terminal, a plain line every 5 s otherwise, and a summary at the end)
          --control -|FIFO       commands for the running pipeline, one a line: viewfinder W:H|off
                                 [animate N], region x,y,w,h [animate N], symbologies VALUES..., engine E,
                                 style KEY=VALUE..., cycle start [LABEL], cycle end, pause, resume, stop
          --cycles MODE          read cycles (a parcel's codes or a NOREAD): 'auto' opens one when a code
                                 enters the viewfinder and closes it after --cycle-gap; 'motion' also on
                                 movement in the viewfinder (a blank parcel is a no-read); 'commands'
                                 ('cycle start', 'cycle end' work in every mode)
          --cycle-timeout MS     a cycle still open after MS closes with what it has
          --cycle-gap MS         auto: the viewfinder empty this long closes the cycle (default 500)
          --expect PATTERN|@FILE the right code: a regular expression or a file of codes (else: mismatch)
          --expect-count N       right codes per cycle: more is 'multiple', fewer 'noread'
          --publish URL          events also to a broker, repeatable: mqtt://[USER@]HOST[:PORT]/PREFIX,
                                 mqtts://..., kafka://HOST[:PORT][,HOST...]/TOPIC; every event then has
                                 "id" and "seq"; nothing is lost while the broker is away (the spool).
                                 MQTT password: $BARSCOPE_MQTT_PASSWORD or $BARSCOPE_MQTT_PASSWORD_FILE
          --node NAME            this machine's name in topics and ids (default: the host name)
          --spool DIR            where events wait for the broker (default: spool in the state folder)
          --spool-max SIZE       the spool's bound, oldest dropped first (default 256MB)
          --index FILE|URL       add every sighting (a code coming into view until it is lost: where, when,
                         the recording and the time in it) to an index: an SQLite file (made when
                         missing) or postgresql://USER@HOST/DB, shared by the nodes of a site
          --camera NAME          the camera's name in the index (default: the pipeline's or the source's)
          --start TIME           a file's start in the wall clock, for the index (default: the file's last
                         change less its length); ISO 8601 (2026-12-06T10:00:00Z) or relative (-2h)

        Events: {"event":"appeared","track":1,"frame":0,"pts_ns":0,"type":"QR-Code","data":"...",
        "quality":1,"polygon":[[x,y],...],"bounds":{...},"in_viewfinder":true}, then "lost", "state",
        "viewfinder" (a change took effect), "cycle" (a read cycle's result), "warning", "error" and "eos". pts_ns is the stream's own timestamp; frame counts decoded frames
        from 0; coordinates are full-frame pixels. With --events -, standard output carries only events.

        SIGINT, SIGTERM or SIGHUP finishes the recording and stops (exit 128+signal); a second one stops
        at once.
        """

    static let search = """
        Usage: barscope search [CODE] [--prefix] [--from TIME] [--to TIME] [--camera NAME] [--limit N]
                               [--json | --csv] [--index FILE|URL]
               barscope search --cycles [--result R] [--label L] [--from TIME] [--to TIME] [--camera NAME]

        Where and when a code was seen: the sightings in the index that `run --index` and `serve` write
        (a sighting is a code coming into view until it is lost), newest first, one a line: first seen
        (UTC), TYPE:code, camera, frames, and the recording with the time of the first sight in it.
          --prefix        CODE is the start of the codes wanted
          --from, --to    a time window on the first sight: ISO 8601 (2026-12-06T10:00:00Z, 2026-12-06)
                          or relative to now (-2h, -30m, -7d)
          --camera NAME   one camera's (a service instance, or a run's pipeline or camera name)
          --limit N       at most N sightings (default 100)
          --json          one JSON object a line: code, type, camera, pipeline, node, first_seen, last_seen,
                          frames, polygon, snapshot, recording, offset_s
          --csv           CSV with a header line
          --index         the index (default: $BARSCOPE_INDEX, else sightings.sqlite in the state folder
                          that serve uses)
          --cycles        read cycles' results instead (run --cycles): opened (UTC), result, label,
                          camera, the codes read; --result good|noread|multiple|mismatch, --label L

        Exit: 0 when something was found, 4 when nothing, 2 on an error (a bad time, no such index).
        """

    static let index = """
        Usage: barscope index PATH... [--index FILE|URL] [--camera NAME] [--start TIME] [--jobs N]
                                      [--lease SECONDS] [--keep-days N] [-q]

        Scans recordings already made (any file `run` reads; a folder: every file in it) into the sightings
        index, several files at once (their frames share the scanning pool). A file already indexed (the
        same path, size and last change) is skipped, so a stopped `index` is started again with the same
        PATHs. Workers on several machines given the same PATHs and one PostgreSQL index split the files:
        each file is claimed with a lease, renewed while it is scanned; a killed worker's file is taken
        again when its lease runs out, and its sightings are written once.
          --index        the index (default: $BARSCOPE_INDEX, else sightings.sqlite in the state folder)
          --camera NAME  the camera the sightings name (default: the file's name before its timestamp,
                         dock1 of dock1-20261205-143000.mp4, else its name)
          --start TIME   the start of a file that says none (ISO 8601 or relative); a file's start is its
                         container's datetime tag, else a timestamp in its name (UTC: 20261205-143000,
                         20261205_143000, 20261205T143000, 2026-12-05_14-30-00, 2026-12-05T14:30:00),
                         else --start, else its last change less its length
          --jobs N       files scanned at once (default: the scanning pool's threads, one per core)
          --lease S      seconds a claim holds without renewal (default 60)
          --keep-days N  first, sightings older than N days are deleted, with the recordings and snapshots
                         they named and the indexed files last changed before then (never a file still
                         being written); with no PATH, only that
          -q, --quiet    no progress line and no summary

        Example:
          barscope index clip.mp4 --index sightings.sqlite --camera dock1

        Exit: 0 every file indexed (now or before), 1 some files bad (each named on a line, skipped),
        2 bad options or an index that cannot be opened or reached.
        """

    static let scan = """
        Usage: barscope scan IMAGE... [--json | --xml | --raw] [-1] [-q] [-S CONFIG]... [--engine zbar|zxing|both]

        Scans still images (PNG, JPEG, ...) and prints each code as TYPE:data, one a line, as zbarimg does
        (byte for byte on ZBar's own example suite, with zbarimg's options).
        Both engines read each image (ZBar and zxing-cpp, results cross-checked); an image where nothing is
        found is read again scaled, rotated, contrast-stretched, inverted, binarized and sharpened (24 megapixels
        of such images at most: the same reads on every machine).
          --json        one JSON object per code instead, with file, type, data, quality, polygon, bounds,
                        engine; a binary payload also as data_base64 with "encoding":"binary"; a part of a
                        QR structured append also as "sequence":{"index":0,"count":4,"id":"27"}

        The parts of a structured append found in the images given (in one or in several) are joined: the
        whole message is printed once more after the last image's codes (with --json: "files" instead of
        "file", "sequence":{"count":4,"id":"27","joined":true}, no polygon).
          -S CONFIG     decoder setting in zbarimg syntax (-Sdisable -Sqrcode.enable, -Si25.disable); zxing-cpp's
                        own formats: datamatrix, aztec, microqr, maxicode (-Sdisable -Sdatamatrix.enable)
          --engine E    zbar, zxing or both (default both)
          --xml         zbarimg's XML layout: a <source> per image, each code a <symbol> (binary data in base64)
          --raw         the data alone, without TYPE: (with -Sbinary, a binary payload's bytes as they are)
          -1, --oneshot an image's first code only
          -q, --quiet   no message when nothing is found (the exit code still says so)

        Exit: 0 if any code was found, 4 if none, 2 on an error (missing file, not an image).
        """

    static let generate = """
        Usage: barscope generate OUT.mp4|OUT.mkv|OUT.webm|TRUTH.jsonl [--size WxH] [--fps N] [--frames N]
                                 [--truth PATH] [--scene codes|conveyor|small|hard|mix] [--seed N] [--bitrate KBITS]
                                 mix: [--codes N] [--module PX] [--speed PX] [--appear-every N] [--blur N]
                                      [--only-1d]

        Encodes the demo scene (QR, EAN-13 and CODE-128 codes moving inside and outside the default
        viewfinder) into H.264 in MP4 or Matroska, or VP8 in WebM (by the name's extension), and writes
        the truth of every frame as JSON Lines with --truth; a .jsonl name writes the truth alone (the
        live demo source's frame N is the scene's frame N, so it is its truth too). --scene conveyor:
        parcels on a belt instead, one at a time through the viewfinder (one EAN-13, none, two EAN-13s, a
        wrong CODE-128, again). --scene small: hard 1D codes of every symbology (EAN-13, EAN-8, UPC-A,
        UPC-E, I2/5, CODE-39, CODE-93, CODE-128, Codabar) in a grid, modules of 1 to 1.5 px, tilted,
        blurred, low contrast. --scene hard: the same grid past what ZBar reads (modules of 1 to 2 px,
        blurs of 0.4 to 1 px, 8 to 30 % contrast, sensor noise). --scene mix: N codes (default 6;
        EAN-13, CODE-128 and QR, or --only-1d), each bouncing in its own cell at --speed pixels a frame
        (default 3), drawn antialiased at --module pixels (default 2; fractional sizes blur), --blur N
        passes of a small blur (σ 0.7 px) over each card, --appear-every N: code i comes into view at
        frame i*N. --seed N chooses the small, hard and mix scenes' texts and looks (default 1).
        --bitrate: constant-bitrate H.264 (MP4 only; default constant quality). Defaults: 1280x720,
        30 frames/s, 300 frames.
        """
}
