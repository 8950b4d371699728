import CBarscope
import CGStreamer
import CGStreamerApp
import Foundation

/// One run of the scan graph, from building it to tearing it down: pre-flight checks, the graph from its plan, the
/// wiring of the source, the stages (tee, scanner, overlay) and the outputs, then the run loop, whose decisions
/// (`RunLoop`) this performs. A `ScanController` makes one per attempt; nothing here restarts or reads signals.
///
/// Sendable: requests and the running graph's handle are behind locks; the rest is immutable.
final class ScanRun: Sendable {
    let configuration: RunConfiguration
    private let settings: LiveSettings
    private let emit: @Sendable (Event) -> Void
    private let requests = Locked(Requests())
    private let active = Locked<Active?>(nil)

    private struct Requests {
        var stop: ContinuousClock.Instant? = nil
        var stopNow = false
        var pause: Bool? = nil
    }

    /// The graph while it runs.
    private struct Active: @unchecked Sendable {
        // Sendable: only thread-safe GStreamer calls are made through it (queries, posting to the bus), and the
        // stages' own state is behind locks.
        let pipeline: Pipeline
        let metrics: RunMetrics
        let timeline: RegionTimeline
        let ledger: FrameLedger
        let scanStage: ScanStage
    }

    /// - Parameters:
    ///   - settings: the live settings (the controller's, shared by every run it starts).
    ///   - reached: told each state the pipeline reaches, before its `state` event is emitted.
    ///   - emit: called for every event; must only queue it (an `EventOutbox`), as it is called under locks.
    private let reached: @Sendable (PipelineState) -> Void
    private let histogram: LatencyHistogram?
    private let totals: RunTotals?
    private let waitForRoom: @Sendable () -> Void
    private let cycles: CycleDesk

    init(
        configuration: RunConfiguration, settings: LiveSettings, histogram: LatencyHistogram? = nil,
        totals: RunTotals? = nil, cycles: CycleDesk? = nil, waitForRoom: @escaping @Sendable () -> Void = {},
        reached: @escaping @Sendable (PipelineState) -> Void = { _ in }, emit: @escaping @Sendable (Event) -> Void
    ) {
        self.reached = reached
        self.waitForRoom = waitForRoom
        self.configuration = configuration
        self.settings = settings
        self.histogram = histogram
        self.totals = totals
        self.cycles = cycles ?? CycleDesk(configuration.cycles)
        self.emit = emit
    }

    /// Finish: end of stream first (recordings are completed), waiting while things still move, and at most
    /// `within` seconds from now. From any thread.
    func stop(within seconds: Double = .infinity) {
        let deadline = ContinuousClock.now + .seconds(min(seconds, 1e9))
        requests.withLock { r in r.stop = min(r.stop ?? deadline, deadline) }
        wakeLoop()
    }

    /// Stop at once: the pipeline is torn down without waiting for the end of stream.
    func stopNow() {
        requests.withLock { $0.stopNow = true }
        wakeLoop()
    }

    func pause() {
        requests.withLock { $0.pause = true }
        wakeLoop()
    }

    func resume() {
        requests.withLock { $0.pause = false }
        wakeLoop()
    }

    /// A request is read by the run loop when it wakes (before the graph runs, at its first look).
    private func wakeLoop() { active.withLock { $0?.pipeline }?.wake() }

    /// Makes the running pipeline fail as if one of its elements had (fault drills, the restart policy's tests).
    func injectError(_ message: String) { active.withLock { $0?.pipeline.postError(message) } }

    /// The stream's frame size, once known (to check a new viewfinder against it).
    var frameSize: Size? { active.withLock { $0?.timeline.frame } }

    /// The frame size and the viewfinder's region of the newest frame (nil region: the whole frame).
    var viewfinderNow: (frame: Size, region: PixelRect?)? {
        guard let stamp = active.withLock({ $0?.timeline.current }), let frame = stamp.frame else { return nil }
        return (frame, stamp.region)
    }

    /// How far the running graph has got (nil when none runs).
    var progress: ScanProgress? {
        guard let a = active.withLock({ $0 }) else { return nil }
        var duration: gint64 = -1
        let known = gst_element_query_duration(a.pipeline.element, GST_FORMAT_TIME, &duration) != 0 && duration > 0
        let frames = a.ledger.frameCounts
        var p = a.metrics.progress(durationNs: known ? UInt64(duration) : nil, skipped: frames.skipped)
        p.framesIn = frames.admitted
        if let lane = a.scanStage.laneCounts {
            p.scanWaiting = lane.waiting
            p.scanShare = lane.busyShare
        }
        return p
    }

    /// Frames held in the ledger of the running graph (tests: it stays bounded).
    var ledgerCount: Int? { active.withLock { $0?.ledger.count } }

    /// A file or still image that gives no picture and no error this long after it starts is opened again, once.
    static let firstPictureSeconds = 5.0
    private struct Reopen: Error {}

    /// Runs to end of stream, an error, or a stop.
    /// - Throws: ``BarscopeError`` naming the input or element at fault (also sent as an `error` event).
    func run() throws -> RunSummary {
        do {
            // uridecodebin sometimes swallows its demuxer's error (a demuxer that fails while decodebin is still
            // plugging it: seen 2 times in 40 on a truncated MP4): a silent file is opened once more.
            do { return try runGraph() } catch is Reopen {}
            do { return try runGraph() } catch is Reopen {
                throw BarscopeError.noPicture(
                    input: configuration.input.description, seconds: Int(Self.firstPictureSeconds))
            }
        } catch let e as BarscopeError {
            // The event stream says why it ends, as standard error does.
            emit(.error(message: e.description, source: nil))
            throw e
        }
    }

    private func runGraph() throws -> RunSummary {
        let c = configuration
        let camera = try Preflight.check(c)
        // Bound before the graph exists, so that a busy port fails at once.
        let rtspOut = try c.serveRTSP.map { try RTSPOut(endpoint: try RTSPOut.Endpoint(parsing: $0)) }
        defer { withExtendedLifetime(rtspOut) {} }
        if let rtspOut { emit(.serving(url: rtspOut.url)) }
        let pipeline = try Pipeline(launch: GraphPlan.scanGraph(c, camera: camera).description)
        try Preflight.setProperties(c.properties, in: pipeline)
        // This stream and those already running share the cores: its video decoder takes its part of them.
        bs_limit_decoder_threads(
            pipeline.element, Int32(ScanPool.decoderThreads(streams: ScanPool.shared.status.lanes + 1)))
        guard let scan = pipeline.child("scan"), let crop = pipeline.child("crop"), let scanq = pipeline.child("scanq"),
            let tee = pipeline.child("t")
        else { throw BarscopeError.pipeline(.incomplete) }
        if let rtspOut, let sink = pipeline.child("rtspout") { bs_set_string(sink, "channel", rtspOut.channel) }
        let wired = try SourceWiring.wire(pipeline, c, camera: camera, emit: emit)
        let live = c.input.isLive
        let ledger = FrameLedger(frameAccurate: !live, drawn: c.draws)
        let metrics = RunMetrics(histogram: histogram)
        let timeline = RegionTimeline(settings: settings)
        for c in cycles.beginRun() { emit(.cycle(c, snapshot: nil)) }
        let teeStage = TeeStage(
            timeline: timeline, ledger: ledger, crop: crop, recordingCrop: pipeline.child("reccrop"), cycles: cycles,
            emit: emit)
        let parts = RunParts(
            configuration: c, settings: settings, ledger: ledger, metrics: metrics, cycles: cycles, emit: emit,
            waitForRoom: waitForRoom)
        let scanStage = ScanStage(parts)
        // Snapshots are encoded and written off the overlay's streaming thread.
        let snapshots = c.draws ? c.snapshotFolder.map { SnapshotWriter(folder: $0, emit: emit) } : nil
        // Registered before anything can start a thread: whatever throws below, the scanning threads end.
        // Set once the normal end has tried to stop the pipeline: a hung teardown is waited for once, not twice.
        var stopTried = false
        defer {
            ledger.end()
            if !stopTried { _ = pipeline.stop(within: 10) }
            scanStage.stop()
            snapshots?.finish()
            ledger.settle()
            metrics.flush()
            teeStage.detach()
            totals?.end()
            active.withLock { $0 = nil }
        }
        teeStage.attach(tee: tee)
        AppSinkWiring.configure(scan, queue: scanq, live: live, stage: scanStage, ledger: ledger)
        let lumaProbe = pipeline.child("scanconv").flatMap { negotiateLuma(converter: $0, sink: scan) }
        defer { lumaProbe?.remove() }
        if c.draws, let overlay = pipeline.child("overlay") {
            OverlayStage(parts, snapshots: snapshots).attach(to: overlay)
        }
        OutputWiring.configure(pipeline, c, live: live)
        // The encoder's output is progress: a stop waits while a slow recording is still being written.
        let encoded = pipeline.child("enc").flatMap {
            PadProbe(on: $0, pad: "src", mask: GST_PAD_PROBE_TYPE_BUFFER) { _ in
                ledger.moved()
                return GST_PAD_PROBE_OK
            }
        }
        defer { encoded?.remove() }
        let previewGate = c.preview?.attach(pipeline, wholeBranch: c.drawsForOutputs ? nil : ledger)
        defer { previewGate?.remove() }
        active.withLock {
            $0 = Active(pipeline: pipeline, metrics: metrics, timeline: timeline, ledger: ledger, scanStage: scanStage)
        }
        totals?.begin(metrics, ledger)

        let start = Date()
        scanStage.start(name: c.input.description)
        if pipeline.setState(GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE {
            throw startFailure(pipeline, wired: wired)
        }
        let interrupted = try loop(pipeline, wired: wired, ledger: ledger, teeStage: teeStage)
        ledger.end()
        stopTried = true
        if !pipeline.stop(within: 10) {
            emit(
                .warning(
                    message: "the pipeline did not stop within 10 s (an element hung in its teardown); left behind",
                    source: nil))
        }
        scanStage.stop()
        // Every snapshot handed over is on disk before the end is said.
        snapshots?.finish()
        // Every streaming and scanning thread has stopped: a frame never scanned is a frame dropped.
        ledger.settle()
        let (frames, codes, unreported) = scanStage.finish()
        metrics.flush()
        let latency = metrics.latencyPercentiles()
        emit(
            .eos(
                frames: frames, codes: codes, latencyP50Ms: latency?.p50, latencyP95Ms: latency?.p95,
                unreported: unreported))
        let counts = ledger.frameCounts
        return RunSummary(
            frames: frames, framesIn: counts.admitted, dropped: counts.skipped, latencyMs: latency, codes: codes,
            seconds: Date().timeIntervalSince(start), interrupted: interrupted)
    }

    /// The pipeline would not start: the reason is on the bus, behind the state changes that came before it.
    private func startFailure(_ pipeline: Pipeline, wired: SourceWiring.Wired) -> BarscopeError {
        let deadline = Date(timeIntervalSinceNow: 2)
        while Date() < deadline, let msg = pipeline.popMessage(timeoutNs: 200_000_000) {
            defer { gst_message_unref(msg) }
            if case .error(let e, let origin) = BusMessage(msg, pipeline: pipeline.element) {
                return RunErrors.map(e, role: role(of: origin, pipeline, wired), configuration: configuration)
            }
        }
        return .pipeline(
            GStreamerError(domain: "barscope", code: 0, message: "\(configuration.input): the pipeline would not start")
        )
    }

    private func role(of origin: UnsafeMutablePointer<GstObject>?, _ pipeline: Pipeline, _ wired: SourceWiring.Wired)
        -> ElementRole
    {
        if isWithin(origin, wired.source) { return .source }
        if isWithin(origin, pipeline.child("rec")) { return .recording }
        return .other
    }

    /// Feeds the run loop and performs its actions until it finishes.
    /// - Returns: whether the run was stopped by request.
    private func loop(_ pipeline: Pipeline, wired: SourceWiring.Wired, ledger: FrameLedger, teeStage: TeeStage) throws
        -> Bool
    {
        let t0 = ContinuousClock.now
        func seconds(_ i: ContinuousClock.Instant) -> Double { (i - t0).inSeconds }
        var options = RunLoop.Options(inputName: configuration.input.description)
        if configuration.input.isLive {
            options.watchdogSeconds = configuration.watchdogSeconds
        } else if case .uri = configuration.input {
            options.firstPictureSeconds = Self.firstPictureSeconds
        } else if case .image = configuration.input {
            options.firstPictureSeconds = Self.firstPictureSeconds
        }
        var machine = RunLoop(options: options, now: 0)
        var seen = ledger.clocks
        /// Performs the machine's actions; true once the run is over.
        func perform(_ input: RunLoop.Input) throws -> Bool {
            for action in machine.handle(input) {
                switch action {
                case .setPlaying: pipeline.setState(GST_STATE_PLAYING)
                case .setPaused: pipeline.setState(GST_STATE_PAUSED)
                case .sendEOS:
                    // This end of stream is the user's, not damage to skip.
                    wired.skipDamage?.stop()
                    pipeline.sendEOS()
                case .seekPastDamage: wired.skipDamage?.seek()
                case .emit(let e): emit(e)
                case .reached(let state):
                    reached(state)
                    emit(.state(state.rawValue))
                case .finish: return true
                case .fail(let e): throw e
                case .reopen: throw Reopen()
                }
            }
            return false
        }
        while true {
            let now = ContinuousClock.now
            var inputs: [RunLoop.Input] = []
            let clocks = ledger.clocks
            if clocks.arrival != seen.arrival { inputs.append(.frame(now: seconds(clocks.arrival))) }
            if clocks.scan != seen.scan { inputs.append(.scanned(now: seconds(clocks.scan))) }
            if clocks.move != seen.move { inputs.append(.progress(now: seconds(clocks.move))) }
            seen = clocks
            let r = requests.withLock { r -> Requests in
                defer { r.pause = nil }
                return r
            }
            if let pause = r.pause { inputs.append(.pause(pause, now: seconds(now))) }
            if let deadline = r.stop { inputs.append(.stop(now: seconds(now), deadline: seconds(deadline))) }
            if r.stopNow { inputs.append(.stopNow) }
            if let problem = teeStage.fatal.withLock({ $0 }) { inputs.append(.fatal(problem)) }
            inputs.append(.tick(now: seconds(now)))
            wired.skipDamage?.checkStalled()
            for input in inputs where try perform(input) { return machine.interrupted }
            // Then the bus, until a message, a request (`wakeLoop`) or the machine's next deadline (a little past
            // it): never a look again and again. Frames and progress are read at each wake; they only ever put a
            // deadline off.
            var wait = machine.nextTick.map { $0 - seconds(ContinuousClock.now) } ?? 3600
            if let stall = wired.skipDamage?.stallDeadline { wait = min(wait, stall.timeIntervalSinceNow) }
            if let msg = pipeline.popMessage(timeoutNs: UInt64(max(0, wait) * 1e9) + 10_000_000) {
                defer { gst_message_unref(msg) }
                if let bus = bus(BusMessage(msg, pipeline: pipeline.element), pipeline, wired),
                    try perform(.bus(bus))
                {
                    return machine.interrupted
                }
            }
        }
    }

    private func bus(_ m: BusMessage, _ pipeline: Pipeline, _ wired: SourceWiring.Wired) -> RunLoop.Bus? {
        switch m {
        case .endOfStream: return .endOfStream
        case .error(let e, let origin):
            return .error(RunErrors.map(e, role: role(of: origin, pipeline, wired), configuration: configuration))
        case .warning(let w): return .warning(message: w.description, source: w.sourceName)
        case .pipelineState(GST_STATE_PLAYING): return .playing
        case .pipelineState(GST_STATE_PAUSED): return .paused
        case .application(SkipDamage.messageName): return .damage
        default: return nil
        }
    }
}
