import CBarscope
import CCairo
import CGStreamer
import CGStreamerApp
import CGStreamerVideo
import Foundation
import Synchronization

/// Builds and runs the scan graph of DESIGN.md:
///
/// source ─► tee ─┬─► queue ─► videocrop (viewfinder) ─► appsink ─► ZBar ─► tracker ─► events
///                └─► queue ─► cairooverlay (viewfinder, mask, codes, labels) ─► tee ─► MP4 | window
///
/// The overlay branch exists only when something shows or records the picture.
/// Sendable: immutable but for the stop flag, an atomic; `stop()` may come from any thread.
public final class ScanRunner: Sendable {
    public let configuration: RunConfiguration
    private let onEvent: @Sendable (Event) -> Void
    private let stopRequested = Atomic<Bool>(false)
    /// Pause (true) or resume (false) asked for, applied by the run loop.
    private let pauseRequest = Locked<Bool?>(nil)
    /// The viewfinder of each frame; changes while playing go here.
    private let timeline: RegionTimeline
    /// Decoder and overlay style, changeable while playing.
    private let live: LiveSettings
    /// The pipeline while `run()` runs (for `injectError`; posting to a bus is thread-safe).
    private let running = Locked<PipelineHandle?>(nil)

    /// Asks a running graph to finish, as SIGINT does: EOS first (recordings are completed), from any thread.
    public func stop() { stopRequested.store(true, ordering: .relaxed) }

    /// Pauses the pipeline (PAUSED: a file holds its place, a live source's frames are not scanned).
    public func pause() { pauseRequest.withLock { $0 = true } }
    /// Resumes after `pause()`.
    public func resume() { pauseRequest.withLock { $0 = false } }

    /// Changes the viewfinder while playing, from any thread: the crop, the mapping of coordinates and the drawing
    /// move together on the same frame (the next to reach the tee), or over `animationFrames` frames.
    /// - Throws: ``BarscopeError/badValue`` when it has no region in the stream's frame size.
    public func setViewfinder(_ viewfinder: Viewfinder, animationFrames: Int = 0) throws {
        try timeline.request(viewfinder, animationFrames: animationFrames)
    }

    /// Changes the decoder settings (`-S` values) and, if given, the engine while playing: each scanning worker
    /// takes them before its next frame.
    public func setDecoder(_ settings: ScannerSettings, engine: Engine? = nil) {
        live.set(settings: settings, engine: engine)
    }

    /// Makes the running pipeline fail as if one of its elements had: for fault drills and the restart policy's
    /// tests. Nothing happens when no pipeline runs.
    public func injectError(_ message: String) {
        running.withLock { $0?.postError(message) }
    }

    /// How far the running graph has got (nil when none runs).
    public var progress: ScanProgress? { running.withLock { $0?.progress } }

    /// Changes the overlay's look while playing, from the next frame drawn.
    public func setStyle(_ style: OverlayStyle) { live.set(style: style) }

    /// - Parameter onEvent: called for every event, from GStreamer's threads and the caller's; must not block long.
    public init(configuration: RunConfiguration, onEvent: @escaping @Sendable (Event) -> Void) {
        self.configuration = configuration
        self.onEvent = onEvent
        timeline = RegionTimeline(viewfinder: configuration.viewfinder)
        live = LiveSettings(settings: configuration.scanner, engine: configuration.engine, style: configuration.style)
    }

    /// The launch description: our own fragments only; user values are set as properties afterwards.
    /// - Parameter camera: for a camera, the caps chosen from what it offers (the capsfilter's, set later).
    static func description(for c: RunConfiguration, camera: CameraChoice? = nil) -> String {
        var d: String
        switch c.input {
        case .demo: d = "appsrc name=src ! tee name=t"
        case .uri: d = "uridecodebin name=src ! tee name=t"
        // imagefreeze repeats the one decoded picture at a rate, so that a recording of it has a duration.
        case .image: d = "uridecodebin name=src ! imagefreeze name=freeze ! capsfilter name=freezecaps ! tee name=t"
        // The file's author wrote it; user values reach it as properties on its named elements.
        case .launch(let fragment, _): d = "\(fragment) ! tee name=t"
        case .device:
            d = "v4l2src name=src ! capsfilter name=camcaps ! "
            d += camera?.needsJPEGDecoder == true ? "jpegdec ! videoconvert ! tee name=t" : "videoconvert ! tee name=t"
        }
        d += " t. ! queue name=scanq ! videocrop name=crop ! videoconvert name=scanconv ! appsink name=scan"
        for b in c.branches where !b.annotated { d += " t. ! queue name=branch-\(b.name) ! \(b.launch)" }
        if c.draws {
            d += " t. ! queue name=drawq ! videoconvert ! video/x-raw,format=BGRx ! cairooverlay name=overlay"
            d += " ! tee name=out"
            if let r = c.recording {
                // reccrop trims an odd last column or row: x264 cannot encode 4:2:0 at an odd size (a 391 px wide label).
                d += " out. ! queue name=recq ! videocrop name=reccrop ! videoconvert ! video/x-raw,format=I420"
                d += " ! x264enc name=enc ! h264parse"
                // async=false: the encoder holds back frames until it has its lookahead, while the scanner is
                // held in preroll; a file sink that also waited for preroll would wait forever.
                if r.segmentSeconds != nil {
                    d += " ! splitmuxsink name=rec"
                } else {
                    d += " ! \(r.muxer) name=mux ! filesink name=rec async=false"
                }
            }
            if c.serveRTSP != nil {
                // Live clients take the newest frames; the served media starts from the matching intervideosrc.
                d += " out. ! queue name=rtspq leaky=downstream max-size-buffers=2 ! intervideosink name=rtspout"
            }
            for b in c.branches where b.annotated { d += " out. ! queue name=branch-\(b.name) ! \(b.launch)" }
            if c.recording == nil && !c.display && c.serveRTSP == nil && !c.branches.contains(where: { $0.annotated }) {
                // Drawn only for --snapshots: the frames end here.
                d += " out. ! fakesink sync=false async=false"
            }
            if c.display {
                d += " out. ! queue name=winq leaky=downstream max-size-buffers=2 ! videoconvert"
                d += " ! autovideosink name=window"
            }
        }
        return d
    }

    /// Runs to end of stream, an error, or a stop request (SIGINT/SIGTERM/SIGHUP: EOS first, so the recording
    /// is finished; a second signal stops at once).
    /// - Throws: ``BarscopeError`` naming the input or element at fault.
    public func run() throws -> RunSummary {
        do {
            // uridecodebin sometimes swallows its demuxer's error (a demuxer that fails while decodebin is still
            // plugging it: seen 2 times in 40 on a truncated MP4): a silent file is opened once more.
            do { return try runGraph() } catch is NoFirstPicture {}
            do { return try runGraph() } catch is NoFirstPicture {
                throw BarscopeError.badInput(
                    "\(configuration.input): not a video or image GStreamer can read (no picture after "
                        + "\(Int(Self.firstPictureSeconds)) s)")
            }
        } catch let e as BarscopeError {
            // The event stream says why it ends, as standard error does.
            onEvent(.error(message: e.description, source: nil))
            throw e
        }
    }

    /// A file that gives no picture and no error this long after it starts is opened again, once.
    static let firstPictureSeconds = 5.0
    private struct NoFirstPicture: Error {}

    private func runGraph() throws -> RunSummary {
        let c = configuration
        var factories = ["tee", "queue", "videocrop", "videoconvert", "appsink"]
        switch c.input {
        case .demo: factories.append("appsrc")
        case .uri: factories.append("uridecodebin")
        case .image: factories += ["uridecodebin", "imagefreeze", "capsfilter"]
        case .device: factories += ["v4l2src", "capsfilter"]
        case .launch: break  // the fragment's elements are checked as it is parsed
        }
        if c.draws { factories.append("cairooverlay") }
        if let r = c.recording {
            factories +=
                ["x264enc", "h264parse", r.muxer, "filesink"] + (r.segmentSeconds != nil ? ["splitmuxsink"] : [])
        }
        if c.display { factories.append("autovideosink") }
        if c.serveRTSP != nil { factories += ["intervideosink", "intervideosrc", "x264enc", "rtph264pay"] }
        try GStreamer.require(factories)
        if let r = c.recording { try Self.checkWritable(r.path) }
        if let folder = c.snapshotFolder {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDir), isDir.boolValue,
                FileManager.default.isWritableFile(atPath: folder)
            else { throw BarscopeError.badInput("\(folder): cannot write snapshots (not a writable folder)") }
        }
        if case .demo(let o) = c.input, c.viewfinder.enabled, c.viewfinder.region(in: o.size) == nil {
            throw BarscopeError.badValue(
                "viewfinder: no region fits in a \(o.size.width)x\(o.size.height) frame with these insets "
                    + "(\(c.viewfinder.minimumInset.description))")
        }

        // Bound before the graph exists, so that a busy port fails at once.
        let rtspOut = try c.serveRTSP.map { try RTSPOut(endpoint: try RTSPOut.Endpoint(parsing: $0)) }
        if let rtspOut { onEvent(.serving(url: rtspOut.url)) }
        // A camera is asked what it offers first; a request it cannot meet stops here, naming what it can do.
        var camera: CameraChoice? = nil
        if case .device(let path) = c.input {
            camera = try CameraChoice.choose(from: CameraProbe.modes(device: path), request: c.camera, device: path)
            if camera?.needsJPEGDecoder == true { try GStreamer.require(["jpegdec"]) }
        }
        let pipeline = try Pipeline(launch: Self.description(for: c, camera: camera))
        if let camera, let filter = pipeline.child("camcaps") { setProperty(filter, "caps", camera.caps) }
        if let rtspOut, let sink = pipeline.child("rtspout") { bs_set_string(sink, "channel", rtspOut.channel) }
        defer { withExtendedLifetime(rtspOut) {} }
        let live = c.input.isLive
        let context = ScanContext(
            configuration: c, timeline: timeline, live: self.live, frameAccurate: !live, emit: onEvent)
        running.withLock { $0 = PipelineHandle(pipeline: pipeline, context: context) }
        defer { running.withLock { $0 = nil } }
        try configure(pipeline, context: context, live: live)

        let start = Date()
        var interrupted = false
        defer {
            context.board.end()
            context.searches.end()
            pipeline.setState(GST_STATE_NULL)
            context.pool.stop()
        }
        return try withExtendedLifetime(context) {
            if pipeline.setState(GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE {
                // The reason is on the bus, behind the state changes that came before it.
                let deadline = Date(timeIntervalSinceNow: 2)
                while Date() < deadline, let msg = pipeline.popMessage(timeoutNs: 200_000_000) {
                    defer { gst_message_unref(msg) }
                    if bs_message_type(msg) == GST_MESSAGE_ERROR {
                        throw mapError(parseBusProblem(msg, warning: false))
                    }
                }
                throw BarscopeError.pipeline(
                    GStreamerError(domain: "barscope", code: 0, message: "\(c.input): the pipeline would not start"))
            }
            // The watchdog: a live source (network stream, camera, live demo) that stops sending without closing is
            // a fault.
            let watched = c.input.isLive
            // A file or still image: its first picture comes within moments, or an error does (the same clock,
            // counting from the start, until a picture has come).
            var awaitingPicture: Bool
            switch c.input {
            case .uri, .image: awaitingPicture = !watched
            default: awaitingPicture = false
            }
            context.lastArrival.withLock { $0 = Date() }
            // Signals received while starting count too (the handler was installed before).
            var handledSignals: Int32 = 0
            var eosDeadline: Date? = nil
            var paused = false
            loop: while true {
                let requests =
                    bs_stop_requests() + (stopRequested.load(ordering: .relaxed) && eosDeadline == nil ? 1 : 0)
                if requests > handledSignals {
                    handledSignals = requests
                    if eosDeadline == nil {
                        interrupted = true
                        // End of stream cannot flow through a paused pipeline.
                        if paused {
                            paused = false
                            pipeline.setState(GST_STATE_PLAYING)
                        }
                        onEvent(
                            .warning(
                                message: "stopping: finishing the recording (signal again to stop now)",
                                source: nil))
                        // This end of stream is the user's, not damage to skip.
                        context.skipDamage?.stop()
                        pipeline.sendEOS()
                        eosDeadline = Date(timeIntervalSinceNow: 10)
                    } else {
                        break loop
                    }
                }
                if let deadline = eosDeadline, Date() > deadline {
                    onEvent(.warning(message: "end of stream did not arrive within 10 s; stopping", source: nil))
                    break loop
                }
                if let problem = context.fatal.withLock({ $0 }) { throw problem }
                if let pause = pauseRequest.withLock({ r -> Bool? in
                    defer { r = nil }
                    return r
                }), eosDeadline == nil,
                    pause != paused
                {
                    paused = pause
                    pipeline.setState(pause ? GST_STATE_PAUSED : GST_STATE_PLAYING)
                    // A paused stream sends nothing: the watchdog counts from the resume.
                    context.lastArrival.withLock { $0 = Date() }
                }
                if watched || awaitingPicture, !paused, eosDeadline == nil {
                    let silent = context.lastArrival.withLock { Date().timeIntervalSince($0) }
                    if watched, silent > c.watchdogSeconds {
                        throw BarscopeError.pipeline(
                            GStreamerError(
                                domain: "barscope", code: 0,
                                message: "\(c.input): no frame for \(Int(c.watchdogSeconds)) s (the stream stalled)"))
                    }
                    if awaitingPicture {
                        awaitingPicture = context.numbers.withLock { $0.next } == 0
                        if awaitingPicture, silent > Self.firstPictureSeconds { throw NoFirstPicture() }
                    }
                }
                context.skipDamage?.checkStalled()
                guard let msg = pipeline.popMessage(timeoutNs: 100_000_000) else { continue }
                defer { gst_message_unref(msg) }
                switch bs_message_type(msg) {
                case GST_MESSAGE_APPLICATION:
                    if let structure = gst_message_get_structure(msg),
                        String(cString: gst_structure_get_name(structure)) == SkipDamage.messageName
                    {
                        context.skipDamage?.seek()
                    }
                case GST_MESSAGE_EOS:
                    break loop
                case GST_MESSAGE_ERROR:
                    let problem = parseBusProblem(msg, warning: false)
                    context.board.end()
                    throw mapError(problem)
                case GST_MESSAGE_WARNING:
                    let w = parseBusProblem(msg, warning: true)
                    onEvent(.warning(message: w.description, source: w.sourceName))
                case GST_MESSAGE_STATE_CHANGED:
                    guard bs_message_src(msg) == bs_gst_object(pipeline.element) else { break }
                    var old = GST_STATE_NULL
                    var new = GST_STATE_NULL
                    var pending = GST_STATE_NULL
                    gst_message_parse_state_changed(msg, &old, &new, &pending)
                    if new == GST_STATE_PLAYING || new == GST_STATE_PAUSED {
                        onEvent(.state(String(cString: gst_element_state_get_name(new)).lowercased()))
                    }
                default:
                    break
                }
            }
            context.board.end()
            context.searches.end()
            pipeline.setState(GST_STATE_NULL)
            context.pool.stop()
            // Every streaming and scanning thread has stopped.
            let (frames, codes) = context.finish()
            let latency = context.latencyPercentiles()
            onEvent(.eos(frames: frames, codes: codes, latencyP50Ms: latency?.p50, latencyP95Ms: latency?.p95))
            return RunSummary(
                frames: frames, latencyMs: latency, codes: codes, seconds: Date().timeIntervalSince(start),
                interrupted: interrupted)
        }
    }

    /// Sets the user's values as properties on named elements and connects the callbacks.
    private func configure(_ pipeline: Pipeline, context: ScanContext, live: Bool) throws {
        let c = configuration
        guard let scan = pipeline.child("scan"), let crop = pipeline.child("crop"),
            let scanq = pipeline.child("scanq"), let tee = pipeline.child("t")
        else { throw BarscopeError.pipeline(GStreamerError(domain: "barscope", code: 0, message: "graph incomplete")) }
        try Self.setProperties(c.properties, in: pipeline)
        // Our sources are named src; a pipeline file's own source fragment needs nothing from us.
        let src = pipeline.child("src")
        if src == nil, case .launch = c.input {
        } else if src == nil {
            throw BarscopeError.pipeline(GStreamerError(domain: "barscope", code: 0, message: "graph incomplete"))
        }
        context.crop = crop
        context.recordingCrop = pipeline.child("reccrop")
        switch c.input {
        case .demo(let options):
            DemoFeeder(options: options).attach(to: src!, live: live)
        case .uri(let uri, _):
            let src = src!
            bs_set_string(src, "uri", uri)
            if uri.lowercased().hasPrefix("rtsp") {
                // rtspsrc is made inside uridecodebin; its transport and latency are set as it appears.
                bs_connect_source_setup(
                    src,
                    { _, source, data in
                        guard let source, let data else { return }
                        Unmanaged<ScanContext>.fromOpaque(data).takeUnretainedValue().setUpSource(source)
                    }, Unmanaged.passUnretained(context).toOpaque())
            }
            // Only video is decoded; audio streams are left alone instead of failing to link.
            setProperty(src, "caps", "video/x-raw(ANY)")
            bs_set_bool(src, "expose-all-streams", 0)
            // A file whose demuxer gives up at damage is scanned on past it (its probe first on the tee).
            if !c.input.isLive, let pad = gst_element_get_static_pad(tee, "sink") {
                context.skipDamage = SkipDamage(pad: pad, name: c.input.description, report: context.emit)
                gst_object_unref(UnsafeMutableRawPointer(pad))
            }
        case .image(let uri, _):
            let src = src!
            bs_set_string(src, "uri", uri)
            setProperty(src, "caps", "video/x-raw(ANY)")
            if let freeze = pipeline.child("freeze"), let rate = pipeline.child("freezecaps") {
                bs_set_int(freeze, "num-buffers", c.imageFrames == 0 ? -1 : Int32(clamping: c.imageFrames))
                setProperty(rate, "caps", "video/x-raw,framerate=\(c.imageFPS)/1")
            }
        case .device(let path):
            bs_set_string(src!, "device", path)
        case .launch:
            break
        }

        setProperty(scan, "caps", lumaCaps)
        bs_set_bool(scan, "sync", 0)
        bs_set_bool(scan, "enable-last-sample", 0)
        if live {
            // Live: scanning never slows the video; the scanner takes the newest frame.
            setProperty(scanq, "leaky", "downstream")
            bs_set_uint(scanq, "max-size-buffers", 1)
            bs_set_uint(scanq, "max-size-bytes", 0)
            bs_set_uint64(scanq, "max-size-time", 0)
            bs_set_uint(scan, "max-buffers", 1)
            bs_set_bool(scan, "drop", 1)
        } else {
            // Files: frame-accurate, nothing dropped; a short bounded queue (appsink would otherwise hold the file).
            bs_set_uint(scan, "max-buffers", 2)
            bs_set_bool(scan, "drop", 0)
        }
        let ctx = Unmanaged.passUnretained(context).toOpaque()
        var callbacks = GstAppSinkCallbacks()
        callbacks.new_sample = { sink, data in
            guard let sink, let data, let sample = gst_app_sink_pull_sample(sink) else { return GST_FLOW_OK }
            Unmanaged<ScanContext>.fromOpaque(data).takeUnretainedValue().submit(sample, preroll: false)
            return GST_FLOW_OK
        }
        // The first frame is scanned at preroll, so that sinks waiting for its overlay (a window, a muxer) can
        // preroll too; appsink then renders that same buffer again, which `scan` recognises and skips.
        callbacks.new_preroll = { sink, data in
            guard let sink, let data, let sample = gst_app_sink_pull_preroll(sink) else { return GST_FLOW_OK }
            Unmanaged<ScanContext>.fromOpaque(data).takeUnretainedValue().submit(sample, preroll: true)
            return GST_FLOW_OK
        }
        callbacks.eos = { _, data in
            guard let data else { return }
            let context = Unmanaged<ScanContext>.fromOpaque(data).takeUnretainedValue()
            // Every frame's results reach the overlay before it is told that no more will come.
            context.pool.waitIdle()
            context.board.end()
        }
        gst_app_sink_set_callbacks(bs_app_sink(scan), &callbacks, ctx, nil)

        // Each buffer is cropped to its own frame's region, even when the region changes while playing.
        if let pad = gst_element_get_static_pad(crop, "sink") {
            gst_pad_add_probe(
                pad, GST_PAD_PROBE_TYPE_BUFFER,
                { _, info, data in
                    guard let info, let data else { return GST_PAD_PROBE_OK }
                    Unmanaged<ScanContext>.fromOpaque(data).takeUnretainedValue().cropFor(info)
                    return GST_PAD_PROBE_OK
                }, ctx, nil)
            gst_object_unref(pad)
        }
        // Caps and frame numbers are read where the stream splits, before either branch sees the buffer.
        if let pad = gst_element_get_static_pad(tee, "sink") {
            let mask = GST_PAD_PROBE_TYPE_BUFFER.rawValue | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM.rawValue
            gst_pad_add_probe(
                pad, GstPadProbeType(rawValue: mask),
                { _, info, data in
                    guard let info, let data else { return GST_PAD_PROBE_OK }
                    Unmanaged<ScanContext>.fromOpaque(data).takeUnretainedValue().observe(info)
                    return GST_PAD_PROBE_OK
                }, ctx, nil)
            gst_object_unref(pad)
        }

        if c.draws, let overlay = pipeline.child("overlay") {
            bs_connect_draw(
                overlay,
                { _, cr, timestamp, _, data in
                    guard let cr, let data else { return }
                    Unmanaged<ScanContext>.fromOpaque(data).takeUnretainedValue().draw(on: cr, ptsNs: UInt64(timestamp))
                }, ctx)
        }
        if let r = c.recording, let rec = pipeline.child("rec"), let enc = pipeline.child("enc") {
            if let seconds = r.segmentSeconds {
                bs_set_string(rec, "location", r.segmentPattern)
                bs_set_uint64(rec, "max-size-time", UInt(seconds) * 1_000_000_000)
                bs_set_bool(rec, "send-keyframe-requests", 1)
                // Our own muxer and sink: the muxer crash-tolerant, the sink not waiting for preroll (see above).
                if let mux = gst_element_factory_make(r.muxer, nil),
                    let sink = gst_element_factory_make("filesink", nil)
                {
                    if r.container == .mp4 { bs_set_uint(mux, "fragment-duration", 1000) }
                    bs_set_bool(sink, "async", 0)
                    bs_set_pointer_object(rec, "muxer", mux)
                    bs_set_pointer_object(rec, "sink", sink)
                }
            } else {
                bs_set_string(rec, "location", r.path)
                if r.container == .mp4, let mux = pipeline.child("mux") { bs_set_uint(mux, "fragment-duration", 1000) }
            }
            setProperty(enc, "speed-preset", live ? "ultrafast" : "superfast")
            if live { setProperty(enc, "tune", "zerolatency") }
            setProperty(enc, "pass", "qual")
            bs_set_uint(enc, "quantizer", 21)
            bs_set_uint(enc, "key-int-max", 60)
            // No B-frames: fragmented MP4 dropped the two frames their reordering delays (75 in, 73 out).
            bs_set_uint(enc, "bframes", 0)
            // x264 needs increasing timestamps, which a live stream decoded from B-frames does not always give.
            if let pad = gst_element_get_static_pad(enc, "sink") {
                IncreasingTimestamps.install(on: pad)
                gst_object_unref(pad)
            }
        }
        if c.display, let window = pipeline.child("window") {
            bs_set_bool(window, "sync", 1)
        }
    }

    /// `[properties] element.property = value`: each value set on the named element as GStreamer parses it from a
    /// string (numbers, enums, caps...), never pasted into a launch description.
    static func setProperties(_ properties: [ElementProperty], in pipeline: Pipeline) throws {
        for p in properties {
            let at = "\(p.origin): [properties] \(p.element).\(p.property)"
            guard let element = pipeline.child(p.element) else {
                throw BarscopeError.badValue("\(at): no element named '\(p.element)' in the graph")
            }
            guard bs_has_property(element, p.property) != 0 else {
                throw BarscopeError.badValue("\(at): element '\(p.element)' has no property '\(p.property)'")
            }
            gst_util_set_object_arg(bs_gobject(element), p.property, p.value)
        }
    }

    /// Builds the graph a configuration describes without running it: a pipeline file's fragments parse, their
    /// elements exist (or the Debian package to install is named), and its properties name real elements and
    /// properties (`barscope validate`).
    public static func checkGraph(_ c: RunConfiguration) throws {
        let pipeline = try Pipeline(launch: description(for: c))
        try setProperties(c.properties, in: pipeline)
    }

    /// Turns a bus error into one line naming the input when the input is at fault.
    private func mapError(_ e: GStreamerError) -> BarscopeError {
        let input = configuration.input.description
        let fromSource = e.source?.contains(":src") ?? false
        if e.domain == "gst-resource-error-quark" && e.code == GST_RESOURCE_ERROR_NOT_AUTHORIZED.rawValue {
            if case .uri(let uri, _) = configuration.input, Redact.uri(uri) != uri {
                return .badInput("\(input): wrong user name or password (the server said: \(e.message))")
            }
            if let k = configuration.rtspCredentials {
                return .badInput(
                    "\(input): wrong user name or password (user '\(k.user)' from BARSCOPE_RTSP_USER; the server "
                        + "said: \(e.message))")
            }
            return .badInput(
                "\(input): the server asks for a user name and password; give them in the URI "
                    + "(rtsp://user:password@host/...) or in BARSCOPE_RTSP_USER and BARSCOPE_RTSP_PASSWORD")
        }
        if e.isNotFound && fromSource { return .badInput("\(input): not found (\(e.message))") }
        // rtspsrc's own words ("Could not open resource for reading and writing.") do not say it never connected.
        if fromSource, e.domain == "gst-resource-error-quark", case .uri(let uri, _) = configuration.input,
            uri.lowercased().hasPrefix("rtsp")
        {
            // Ask the network why: an unknown host, a closed port, an unreachable network and a silent host read
            // alike from rtspsrc ("Could not open resource for reading and writing", "Could not read from resource").
            if let reason = ConnectProbe.diagnose(uri: uri) { return .badInput("\(input): \(reason)") }
            if e.code == GST_RESOURCE_ERROR_OPEN_READ_WRITE.rawValue {
                return .badInput(
                    "\(input): the server took the connection but the stream did not open (\(e.message))")
            }
        }
        if e.isTypeNotFound || (fromSource && e.domain == "gst-stream-error-quark") {
            return .badInput("\(input): not a video or image GStreamer can read (\(e.message))")
        }
        if fromSource { return .badInput("\(input): \(e.message)") }
        if let r = configuration.recording, e.sourceName == "rec" || (e.source?.contains("GstFileSink") ?? false) {
            // A disk that fills up, or fails, while recording is a failure of the run (exit 3), not of the
            // user's input: what was written up to then stays playable (fragmented MP4, Matroska).
            if e.domain == "gst-resource-error-quark" && e.code == GST_RESOURCE_ERROR_NO_SPACE_LEFT.rawValue {
                return .pipeline(
                    GStreamerError(
                        domain: e.domain, code: e.code,
                        message: "\(r.path): cannot record: no space left on the device", debug: e.debug))
            }
            if e.domain == "gst-resource-error-quark" && e.code == GST_RESOURCE_ERROR_WRITE.rawValue {
                return .pipeline(
                    GStreamerError(
                        domain: e.domain, code: e.code,
                        message: "\(r.path): cannot record: \(e.message)", debug: e.debug))
            }
            return .badInput("\(r.path): cannot record (\(e.message))")
        }
        return .pipeline(e)
    }

    static func checkWritable(_ path: String) throws {
        let dir = (path as NSString).deletingLastPathComponent
        let folder = dir.isEmpty ? "." : dir
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDir), isDir.boolValue else {
            throw BarscopeError.badInput("\(path): cannot record (no such folder '\(folder)')")
        }
        var existing: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &existing), existing.boolValue {
            throw BarscopeError.badInput("\(path): cannot record (it is a folder)")
        }
        guard FileManager.default.isWritableFile(atPath: folder) else {
            throw BarscopeError.badInput("\(path): cannot record (folder '\(folder)' is not writable)")
        }
    }
}

/// What the streaming and scanning threads share during one run.
///
/// Sendable: configuration is immutable; geometry, frame numbers and the in-order delivery state (tracker
/// included) are behind lock; `prerolled`, `crop` and `recordingCrop` are touched only by appsink's streaming
/// thread and the caps probe respectively; the crops are borrowed from the pipeline, which outlives this context.
final class ScanContext: @unchecked Sendable {
    struct FrameNumbers {
        var next = 0
        var pending: [(pts: UInt64?, frame: Int)] = []
    }
    /// Arrival times at the tee, by frame number, and the measured latencies (the last 8192).
    struct Latency {
        var arrivals: [Int: ContinuousClock.Instant] = [:]
        var samplesMs: [Double] = []
        var next = 0
    }
    /// Results arrive from the workers in any order and leave in frame order.
    struct Delivery {
        var nextSequence = 0
        var waiting: [Int: (frame: Int, ptsNs: UInt64?, detections: [Detection])] = [:]
        var framesScanned = 0
        var last: (frame: Int, ptsNs: UInt64?) = (0, nil)
        let tracker: Tracker
        var duplicates: DuplicateFilter
    }

    let configuration: RunConfiguration
    let emit: @Sendable (Event) -> Void
    let board: ResultBoard
    let frameAccurate: Bool
    /// The viewfinder region of each frame (changes while playing included).
    let timeline: RegionTimeline
    /// The crop videocrop was last told: left, top, right, bottom (the crop probe's thread only; a lock for
    /// Sendable's sake).
    let cropApplied = Locked<PixelRect?>(nil)
    /// A problem found on a streaming thread that must stop the run (the bus loop polls it).
    let fatal = Locked<BarscopeError?>(nil)
    let numbers = Locked(FrameNumbers())
    let delivery: Locked<Delivery>
    let overlayTimeouts = Atomic<Int>(0)
    /// For the status line: frames drawn, codes seen, since when.
    let drawn = Atomic<Int>(0)
    let seen = Atomic<Int>(0)
    let started = Date()
    /// Frames (by pts) on which a code appeared, whose annotated picture `--snapshots` keeps.
    let snapshotsDue = Locked<[UInt64: (frame: Int, tracks: [Int])]>([:])
    let latency = Locked(Latency())
    /// When the last frame reached the tee (the watchdog's clock).
    let lastArrival = Locked(Date())
    /// Tracked mode: the results of each full search, which the frames after it rescan around.
    let searches = SearchBoard()
    /// Tracked mode: searches so far, and whether the half-size search finds what the full-size one does.
    let searchCount = Atomic<Int>(0)
    let halfSizeSearch = Atomic<Bool>(false)
    /// The overlay's renderer and the style generation it was made for (the overlay thread only).
    private var renderer: OverlayRenderer
    private var styleGeneration: Int
    let live: LiveSettings
    private(set) var pool: ScanWorkerPool! = nil
    var crop: UnsafeMutablePointer<GstElement>? = nil
    /// The recording branch's crop to an even size (nil without a recording); borrowed like `crop`.
    var recordingCrop: UnsafeMutablePointer<GstElement>? = nil
    /// For a file: goes on past a stretch its demuxer cannot read (set before the pipeline plays).
    var skipDamage: SkipDamage? = nil
    /// The buffer scanned at preroll (appsink's streaming thread only); compared by address, never dereferenced.
    private var prerolled: UnsafeRawPointer? = nil
    /// Sequence numbers handed out by appsink's streaming thread.
    private var submitted = 0

    init(
        configuration: RunConfiguration, timeline: RegionTimeline, live: LiveSettings, frameAccurate: Bool,
        emit: @escaping @Sendable (Event) -> Void
    ) {
        self.configuration = configuration
        self.timeline = timeline
        self.live = live
        self.frameAccurate = frameAccurate
        self.emit = emit
        // Only an overlay takes results by frame; with nothing drawn the board keeps just the newest.
        board = ResultBoard(frameAccurate: frameAccurate && configuration.draws)
        delivery = Locked(
            Delivery(
                tracker: Tracker(lostAfterFrames: configuration.lostAfterFrames),
                duplicates: DuplicateFilter(policy: configuration.duplicates)))
        let style = live.style
        renderer = OverlayRenderer(style: style.style)
        styleGeneration = style.generation
        pool = ScanWorkerPool(
            workers: configuration.scanThreads, settings: configuration.scanner, engine: configuration.engine,
            live: live
        ) {
            [weak self] scanner, job in
            self?.scan(job, with: scanner)
        }
    }

    /// uridecodebin's source-setup (any thread): RTSP transport and latency on the rtspsrc it made.
    func setUpSource(_ source: UnsafeMutablePointer<GstElement>) {
        if let t = configuration.rtspTransport, bs_has_property(source, "protocols") != 0 {
            setProperty(source, "protocols", t == "tcp" ? "tcp" : "udp")
        }
        if let ms = configuration.rtspLatencyMs, bs_has_property(source, "latency") != 0 {
            bs_set_uint(source, "latency", UInt32(ms))
        }
        // Credentials given apart from the URI: rtspsrc's own properties (those in the URI win: rtspsrc reads them
        // from its location).
        if let k = configuration.rtspCredentials, case .uri(let uri, _) = configuration.input, Redact.uri(uri) == uri,
            bs_has_property(source, "user-id") != 0
        {
            bs_set_string(source, "user-id", k.user)
            bs_set_string(source, "user-pw", k.password)
        }
    }

    /// Tee sink probe (upstream streaming thread): caps set the viewfinder crop before any buffer reaches
    /// videocrop; each buffer gets its decoded-frame number.
    func observe(_ info: UnsafeMutablePointer<GstPadProbeInfo>) {
        if let buffer = bs_probe_buffer(info) {
            let pts = bs_buffer_pts(buffer)
            let now = ContinuousClock.now
            lastArrival.withLock { $0 = Date() }
            let frame = numbers.withLock { n -> Int in
                n.pending.append((pts == .max ? nil : UInt64(pts), n.next))
                n.next += 1
                if n.pending.count > 512 { n.pending.removeFirst(n.pending.count - 512) }
                return n.next - 1
            }
            let (stamp, changed) = timeline.stamp(frameNumber: frame, pts: pts == .max ? nil : UInt64(pts))
            if changed {
                emit(.viewfinder(frame: frame, ptsNs: pts == .max ? nil : UInt64(pts), region: stamp.region))
            }
            latency.withLock { l in
                l.arrivals[frame] = now
                // Live sources drop frames before the scanner: forget arrivals that can no longer be delivered.
                if l.arrivals.count > 512 { l.arrivals = l.arrivals.filter { $0.key > frame - 256 } }
            }
            return
        }
        guard let event = bs_probe_event(info), bs_event_type(event) == GST_EVENT_CAPS else { return }
        var caps: UnsafeMutablePointer<GstCaps>? = nil
        gst_event_parse_caps(event, &caps)
        var videoInfo = GstVideoInfo()
        guard let caps, gst_video_info_from_caps(&videoInfo, caps) != 0 else { return }
        let frame = Size(width: Int(videoInfo.width), height: Int(videoInfo.height))
        // New caps (the first, or a camera that switched resolution): the region follows the new size at once.
        guard let stamp = timeline.setFrame(frame) else {
            fatal.withLock {
                $0 = .badValue(
                    "viewfinder: no region fits in a \(frame.width)x\(frame.height) frame with these insets "
                        + "(\(timeline.viewfinder.minimumInset.description))")
            }
            return
        }
        _ = stamp  // videocrop is set per buffer, from its own frame's stamp (buffers of the old size may be queued)
        if let recordingCrop {
            bs_set_int(recordingCrop, "right", Int32(frame.width % 2))
            bs_set_int(recordingCrop, "bottom", Int32(frame.height % 2))
        }
    }

    /// Tells videocrop the region (from the caps probe, and from the probe on its sink pad for each buffer, where
    /// it takes effect on that very buffer: basetransform renegotiates before transforming it).
    func applyCrop(_ region: PixelRect?, frame: Size) {
        guard let crop else { return }
        let r = region ?? PixelRect(x: 0, y: 0, width: frame.width, height: frame.height)
        // The right and bottom margins follow from the rectangle and the frame; the rectangle inside the frame is
        // what changes (a frame of another size gives another rectangle: `r` is the whole frame when off).
        let margins = PixelRect(x: r.x, y: r.y, width: frame.width - r.maxX, height: frame.height - r.maxY)
        cropApplied.withLock { last in
            guard last != margins else { return }
            last = margins
            bs_set_int(crop, "left", Int32(margins.x))
            bs_set_int(crop, "top", Int32(margins.y))
            bs_set_int(crop, "right", Int32(margins.width))
            bs_set_int(crop, "bottom", Int32(margins.height))
        }
    }

    /// videocrop's sink pad (the scan queue's thread): the buffer is cropped to the region stamped on its frame.
    func cropFor(_ info: UnsafeMutablePointer<GstPadProbeInfo>) {
        guard let buffer = bs_probe_buffer(info) else { return }
        let pts = bs_buffer_pts(buffer)
        let stamp = timeline.stamp(forPTS: pts == .max ? nil : UInt64(pts))
        guard let frame = stamp.frame else { return }
        applyCrop(stamp.region, frame: frame)
    }

    /// appsink streaming thread: number the frame and hand it to a scanning worker (blocks while all are busy).
    /// Takes over the sample's reference.
    func submit(_ sample: OpaquePointer, preroll: Bool) {
        // The buffer scanned at preroll comes again as the first sample: scan each buffer once.
        let buffer = gst_sample_get_buffer(sample)
        let address = buffer.map { UnsafeRawPointer($0) }
        if preroll {
            prerolled = address
        } else if let a = address, a == prerolled {
            prerolled = nil
            gst_sample_unref(sample)
            return
        }
        let rawPts = buffer.map { bs_buffer_pts($0) } ?? .max
        let pts: UInt64? = rawPts == .max ? nil : UInt64(rawPts)
        let frame = numbers.withLock { n -> Int in
            while let first = n.pending.first {
                n.pending.removeFirst()
                if first.pts == pts || pts == nil || first.pts == nil { return first.frame }
            }
            return n.next
        }
        let sequence = submitted
        submitted += 1
        pool.submit(ScanWorkerPool.Job(sequence: sequence, frame: frame, ptsNs: pts, sample: sample))
    }

    /// A scanning worker: scan the cropped luma plane (in tracked mode, between full searches, only around the
    /// codes last seen), then deliver in frame order.
    func scan(_ job: ScanWorkerPool.Job, with scanner: BarcodeReader) {
        let region = timeline.stamp(forPTS: job.ptsNs).region
        let c = configuration
        let full = !c.tracked || job.sequence % max(1, c.trackedInterval) == 0
        let detections =
            withLumaPlane(of: job.sample) { luma, _ -> [Detection] in
                let mapping = CropMapping(region: region)
                if full && !c.tracked {
                    scanner.zbarScanner.setDensity(1)
                    return scanner.read(luma, mapping: mapping, viewfinder: region)
                }
                if full {
                    let found = trackedSearch(luma, mapping: mapping, region: region, with: scanner)
                    searches.publish(job.sequence, found, search: true)
                    return found
                }
                // Between searches: around where each known code should be now (moved by its velocity), from
                // whatever earlier frames the workers have finished.
                let found = TrackedRegions.rescan(
                    luma, around: searches.predicted(for: job.sequence), mapping: mapping, viewfinder: region,
                    with: scanner)
                searches.publish(job.sequence, found, search: false)
                return found
            } ?? []
        delivery.withLock { d in
            d.waiting[job.sequence] = (job.frame, job.ptsNs, detections)
            while let r = d.waiting.removeValue(forKey: d.nextSequence) {
                d.nextSequence += 1
                d.framesScanned += 1
                d.last = (r.frame, r.ptsNs)
                let done = ContinuousClock.now
                latency.withLock { l in
                    guard let arrived = l.arrivals.removeValue(forKey: r.frame) else { return }
                    let ms =
                        Double((done - arrived).components.attoseconds) / 1e15
                        + Double((done - arrived).components.seconds) * 1000
                    if l.samplesMs.count < 8192 {
                        l.samplesMs.append(ms)
                    } else {
                        l.samplesMs[l.next % 8192] = ms
                    }
                    l.next += 1
                }
                let (ids, trackEvents) = d.tracker.update(frame: r.frame, ptsNs: r.ptsNs, detections: r.detections)
                seen.store(d.tracker.tracksStarted, ordering: .relaxed)
                if configuration.snapshotFolder != nil, let pts = r.ptsNs {
                    let fresh = trackEvents.compactMap { e -> Int? in
                        if case .appeared(_, _, _, let id) = e { return id }
                        return nil
                    }
                    if !fresh.isEmpty { snapshotsDue.withLock { $0[pts] = (r.frame, fresh) } }
                }
                if configuration.everyFrame {
                    for (det, id) in zip(r.detections, ids) {
                        emit(.detection(frame: r.frame, ptsNs: r.ptsNs, detection: det, track: id))
                    }
                } else {
                    for e in trackEvents where d.duplicates.admit(e) { emit(e) }
                }
                board.publish(ptsNs: r.ptsNs, r.detections)
            }
        }
    }

    /// Tracked mode's full search. While the codes in view read as well from the frame at half size (a quarter of
    /// the pixels: modules of 2 px and more), searches run there and each code found is read again at full size in
    /// its own small region, for its exact box and text. Every `validateEvery`-th search runs at full size and at
    /// half size on the same frame: half size stays in use only while it finds every code full size finds (small
    /// codes turn it off; a code too small for half size is found at the next full-size search).
    func trackedSearch(_ luma: LumaImage, mapping: CropMapping, region: PixelRect?, with scanner: BarcodeReader)
        -> [Detection]
    {
        let c = configuration
        scanner.zbarScanner.setDensity(c.trackedSearchDensity)
        let n = searchCount.add(1, ordering: .relaxed).oldValue
        if n % TrackedSearch.validateEvery == 0 {
            let found = scanner.read(luma, mapping: mapping, viewfinder: region)
            let half = Set(scanner.readHalved(luma).map { $0.type + "\u{0}" + $0.data })
            halfSizeSearch.store(found.allSatisfy { half.contains($0.type + "\u{0}" + $0.data) }, ordering: .relaxed)
            return found
        }
        guard halfSizeSearch.load(ordering: .relaxed) else {
            return scanner.read(luma, mapping: mapping, viewfinder: region)
        }
        let coarse = scanner.readHalved(luma).map { d -> Expected in
            var d = d
            d.polygon = d.polygon.map(mapping.toFrame)
            d.bounds = Bounds(enclosing: d.polygon)
            // Placed to a pixel or two: a tight region around it is enough.
            return Expected(detection: d, hasVelocity: true, framesSince: 0, speed: 2)
        }
        return TrackedRegions.rescan(luma, around: coarse, mapping: mapping, viewfinder: region, with: scanner)
    }

    /// Median and 95th percentile of arrival-to-results time, over the last 8192 frames.
    func latencyPercentiles() -> (p50: Double, p95: Double)? {
        let samples = latency.withLock { $0.samplesMs }.sorted()
        guard !samples.isEmpty else { return nil }
        func pick(_ q: Double) -> Double { samples[min(samples.count - 1, Int(Double(samples.count) * q))] }
        return (pick(0.5), pick(0.95))
    }

    /// After the run: close the open tracks; returns frames scanned and codes seen.
    func finish() -> (frames: Int, codes: Int) {
        delivery.withLock { d in
            for e in d.tracker.finish(frame: d.last.frame, ptsNs: d.last.ptsNs)
            where !configuration.everyFrame && d.duplicates.admit(e) {
                emit(e)
            }
            return (d.framesScanned, d.tracker.tracksStarted)
        }
    }

    /// cairooverlay's draw signal (overlay branch thread): the frame's own detections when frame-accurate.
    func draw(on cr: OpaquePointer, ptsNs: UInt64) {
        let pts: UInt64? = ptsNs == .max ? nil : ptsNs
        let stamp = timeline.stamp(forPTS: pts)
        guard let frame = stamp.frame else { return }
        var detections = board.detections(forPts: pts, timeout: 10)
        if detections == nil {
            if overlayTimeouts.add(1, ordering: .relaxed).oldValue == 0 {
                emit(
                    .warning(
                        message: "the scanner fell 10 s behind the overlay; drawing without results",
                        source: "overlay"))
            }
            detections = []
        }
        let shown = detections ?? []
        let drawnFrames = drawn.add(1, ordering: .relaxed).newValue
        let seconds = Date().timeIntervalSince(started)
        let status = String(
            format: "barscope  frame %d  ·  %d in view  ·  %d seen  ·  %.1f frames/s", drawnFrames - 1, shown.count,
            seen.load(ordering: .relaxed), seconds > 0 ? Double(drawnFrames) / seconds : 0)
        if live.styleGeneration != styleGeneration {
            let style = live.style
            styleGeneration = style.generation
            renderer = OverlayRenderer(style: style.style)
        }
        renderer.draw(
            on: cr, frame: frame, viewfinder: stamp.region, secondary: stamp.secondary, detections: shown,
            status: status)
        if let folder = configuration.snapshotFolder, let pts,
            let due = snapshotsDue.withLock({ $0.removeValue(forKey: pts) })
        {
            saveSnapshot(cr, folder: folder, frame: due.frame, ptsNs: pts, tracks: due.tracks)
        }
    }

    /// Writes the annotated frame as PNG: evidence of what was scanned, and when (`--snapshots DIR`).
    func saveSnapshot(_ cr: OpaquePointer, folder: String, frame: Int, ptsNs: UInt64, tracks: [Int]) {
        let name = String(format: "frame-%06d-track-%@.png", frame, tracks.map(String.init).joined(separator: "-"))
        let path = (folder as NSString).appendingPathComponent(name)
        guard let surface = cairo_get_target(cr) else { return }
        cairo_surface_flush(surface)
        if cairo_surface_write_to_png(surface, path) == CAIRO_STATUS_SUCCESS {
            emit(.snapshot(frame: frame, ptsNs: ptsNs, path: path, tracks: tracks))
        } else {
            emit(.warning(message: "\(path): cannot write snapshot", source: "overlay"))
        }
    }
}

/// Sendable: only `postError` and the position and duration queries are made through it, and both are
/// thread-safe in GStreamer; the context's counters are atomics and locks.
struct PipelineHandle: @unchecked Sendable {
    let pipeline: Pipeline
    let context: ScanContext
    func postError(_ message: String) { pipeline.postError(message) }

    var progress: ScanProgress {
        let (frames, pts) = context.delivery.withLock { ($0.framesScanned, $0.last.ptsNs) }
        var duration: gint64 = -1
        let known = gst_element_query_duration(pipeline.element, GST_FORMAT_TIME, &duration) != 0 && duration > 0
        return ScanProgress(
            frames: frames, codes: context.seen.load(ordering: .relaxed), positionNs: pts,
            durationNs: known ? UInt64(duration) : nil, seconds: Date().timeIntervalSince(context.started))
    }
}

/// How far a run has got, for a progress line.
public struct ScanProgress: Sendable {
    /// Frames scanned so far.
    public var frames: Int
    /// Codes seen (tracks started).
    public var codes: Int
    /// The stream time of the last frame scanned, and the stream's duration when it has one (files).
    public var positionNs: UInt64?
    public var durationNs: UInt64?
    /// Since the graph was built.
    public var seconds: Double
    public var framesPerSecond: Double { seconds > 0 ? Double(frames) / seconds : 0 }
}
