import Foundation
import Synchronization

/// What a controller is doing.
public enum ControllerState: Sendable, Equatable {
    case idle
    case starting
    case playing
    case paused
    /// Waiting before attempt `attempt` to start again (the restart policy).
    case restarting(attempt: Int)
    /// Ended: stopped, or at the end of the stream.
    case stopped
    /// Ended by an error the policy did not restart after (or the attempts ran out).
    case failed(String)
}

/// A pipeline's state as every channel says it: the service's answers and console, the MQTT status, the metrics
/// (the OpenAPI document lists the same words). `stopped`: asked to stop; `completed`: its stream ended.
public enum InstanceState: String, Sendable, CaseIterable {
    case starting, playing, paused, reconnecting, failed, stopped, completed
}

extension ControllerState {
    /// As every channel says it; `stopRequested` tells a stop asked for from the stream's own end.
    public func said(stopRequested: Bool) -> InstanceState {
        switch self {
        case .idle, .starting: return .starting
        case .playing: return .playing
        case .paused: return .paused
        case .restarting: return .reconnecting
        case .failed: return .failed
        case .stopped: return stopRequested ? .stopped : .completed
        }
    }
}

/// One named scanning pipeline under control, the one supervisor of runs for the command line and for programs
/// that embed Barscope: start, pause, resume, stop, its state, its events as an `AsyncStream` (the JSON Lines
/// events are their encoding) and to an observer, live changes of the viewfinder, decoder and style (one home,
/// `settings`, which every restart starts from), and a restart policy with backoff. Several controllers run side by
/// side in one process, each with its own pipeline, state and events.
///
/// ```swift
/// let dock = ScanController(name: "dock", configuration: config, restart: .onError)
/// dock.start()
/// for await event in dock.events { if case .appeared(_, _, let code, _) = event { print(code.data) } }
/// ```
///
/// Events are delivered on a thread of the controller's own, in order, never under a lock of the code that made
/// them: an observer may call back (`progress`, `stop`) freely.
/// Sendable: the state and the current run are behind locks; the settings and the outbox are thread-safe.
public final class ScanController: Sendable {
    public let name: String
    /// Every event of every run, in order, until the controller ends (then the stream finishes). Bounded: when
    /// nobody reads, the oldest events are dropped first (`bufferLimit`).
    public let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    public let restart: RestartPolicy
    public let backoff: ReconnectPolicy
    public let condition: RestartCondition
    /// What the user set that may change while playing; every run, restarts included, starts from it.
    public let settings: LiveSettings
    /// Read cycles: commands, and the counts since start (across runs).
    public let cycles: CycleDesk
    /// Latency from the tee to results, across every run.
    public let latency = LatencyHistogram()
    /// Frames scanned and skipped, across every run (failed ones too).
    private let runTotals = RunTotals()
    /// Frames scanned, dropped and in, over every run.
    public var totals: (frames: Int, dropped: Int, admitted: Int) { runTotals.counts }

    private let configuration: RunConfiguration
    private let outbox: EventOutbox
    private let current = Locked<ScanRun?>(nil)
    private let stateBox = Locked<ControllerState>(.idle)
    private struct Requests {
        var stop = false
        var stopNow = false
        var stopWithin: Double = .infinity
        var paused = false
    }
    private let requests = Locked(Requests())
    /// Signalled by every stop request: it wakes a backoff between attempts.
    private let stopAsked = DispatchSemaphore(value: 0)
    private let done = Locked<(finished: Bool, summary: RunSummary?, failure: BarscopeError?)>((false, nil, nil))
    private let finishedCondition = CountedCondition()

    /// - Parameters:
    ///   - restart: when to start again by itself; `backoff` sets the waits (1, 2, 4 ... s) and the attempts;
    ///     `condition` narrows which ended attempts may restart (the command line: network streams that played).
    ///   - bufferLimit: events kept for a slow reader of `events` before the oldest are dropped.
    ///   - observer: also called with every event, in order, on the controller's delivery thread (for programs
    ///     that are not async). A slow observer slows a file's scan (back-pressure), never a live source's video.
    public init(
        name: String, configuration: RunConfiguration, restart: RestartPolicy = .never,
        backoff: ReconnectPolicy = ReconnectPolicy(), condition: RestartCondition = .any, bufferLimit: Int = 4096,
        observer: (@Sendable (Event) -> Void)? = nil
    ) {
        self.name = name
        self.restart = restart
        self.backoff = backoff
        self.condition = condition
        self.configuration = configuration
        settings = LiveSettings(configuration)
        cycles = CycleDesk(configuration.cycles)
        let (stream, continuation) = AsyncStream.makeStream(
            of: Event.self, bufferingPolicy: .bufferingNewest(bufferLimit))
        events = stream
        self.continuation = continuation
        // A live source never waits for an observer: its outbox drops (counted, and said) when full.
        outbox = EventOutbox(name: name, waits: !configuration.input.isLive) { event in
            observer?(event)
            continuation.yield(event)
        }
    }

    deinit {
        // Never started: its delivery thread still waits for events.
        outbox.close()
        continuation.finish()
    }

    public var state: ControllerState { stateBox.withLock { $0 } }

    /// Its state as every channel says it (a stop asked for told from the stream's own end).
    public var instanceState: InstanceState { state.said(stopRequested: isStopping) }

    /// The last run's summary once the controller has ended.
    public var summary: RunSummary? { done.withLock { $0.summary } }

    /// Why the controller ended, when an error ended it.
    public var failure: BarscopeError? { done.withLock { $0.failure } }

    /// An event from outside the runs (a broker, a control channel) joins theirs: delivered to the observer by the
    /// same thread, in the order given, so that the observer is the one writer of the events. Never waits.
    public func report(_ event: Event) { outbox.post(event) }

    /// How far the running pipeline has got (nil between runs).
    public var progress: ScanProgress? {
        guard var p = current.withLock({ $0 })?.progress else { return nil }
        p.cycles = cycles.counts
        return p
    }

    /// The running pipeline's frame size and the viewfinder's region in it, in frame pixels (nil region: the whole
    /// frame; nil: no frame yet, or between runs).
    public var viewfinderNow: (frame: Size, region: PixelRect?)? { current.withLock { $0 }?.viewfinderNow }

    /// Frames the running pipeline's ledger holds (a bounded number: the frames between the tee and the slower
    /// branch).
    public var ledgerCount: Int? { current.withLock { $0 }?.ledgerCount }

    /// A stop has been asked for (the command line's next signal then stops at once).
    public var isStopping: Bool { requests.withLock { $0.stop } }

    /// Starts the pipeline on a thread of its own; returns at once. A second call does nothing.
    public func start() {
        let first = stateBox.withLock { s -> Bool in
            guard s == .idle else { return false }
            s = .starting
            return true
        }
        guard first else { return }
        let thread = Thread { [self] in supervise() }
        thread.name = "barscope-\(name)"
        thread.start()
    }

    /// Runs to the end on the caller's thread: start, wait, then the summary, or the error that ended it.
    public func run() throws -> RunSummary {
        start()
        wait()
        if let failure { throw failure }
        return summary
            ?? RunSummary(frames: 0, framesIn: 0, dropped: 0, latencyMs: nil, codes: 0, seconds: 0, interrupted: true)
    }

    /// Pauses the pipeline (a file keeps its place; a live source's frames go unscanned and unrecorded).
    public func pause() {
        requests.withLock { $0.paused = true }
        current.withLock { $0 }?.pause()
    }

    public func resume() {
        requests.withLock { $0.paused = false }
        current.withLock { $0 }?.resume()
    }

    /// Stops: end of stream first (a recording is finished and playable, waiting while it is still being written),
    /// then the pipeline is torn down; no restart follows. Waits at most `timeout` seconds. Called from an event
    /// observer, it asks and returns at once (waiting there would wait for itself).
    /// - Returns: false when the controller had not ended within `timeout`.
    @discardableResult
    public func stop(timeout: Double = 15) -> Bool {
        requestStop(within: max(0, timeout - 1))
        if stateBox.withLock({ s -> Bool in
            guard s == .idle else { return false }
            s = .stopped
            return true
        }) {
            finish(summary: nil, failure: nil)
            return true
        }
        if outbox.isDeliveryThread { return false }
        return wait(timeout: timeout)
    }

    /// Asks for a stop without waiting: end of stream first, given up `within` seconds from now.
    public func requestStop(within seconds: Double = .infinity) {
        requests.withLock { r in
            r.stop = true
            r.stopWithin = min(r.stopWithin, seconds)
        }
        stopAsked.signal()
        current.withLock { $0 }?.stop(within: seconds)
    }

    /// Stops at once, without waiting for the end of stream (a second Ctrl-C).
    public func stopNow() {
        requests.withLock {
            $0.stop = true
            $0.stopNow = true
        }
        stopAsked.signal()
        current.withLock { $0 }?.stopNow()
    }

    /// Waits until the controller has ended (stopped, end of stream, or failed) and its events are delivered.
    /// - Returns: false on timeout.
    @discardableResult
    public func wait(timeout: Double = .infinity) -> Bool {
        let deadline = Date(timeIntervalSinceNow: min(timeout, 1e9))
        finishedCondition.lock()
        defer { finishedCondition.unlock() }
        while !done.withLock({ $0.finished }) {
            if !finishedCondition.wait(until: deadline) { return done.withLock { $0.finished } }
        }
        return true
    }

    /// Changes the viewfinder of the running pipeline (and of every restart after): the crop, the coordinates and
    /// the drawing move together on the same frame, or over `animationFrames` frames.
    /// - Throws: ``BarscopeError/badValue`` when it has no region in the stream's frame size.
    public func setViewfinder(_ viewfinder: Viewfinder, animationFrames: Int = 0) throws {
        if let frame = current.withLock({ $0 })?.frameSize, viewfinder.enabled, viewfinder.region(in: frame) == nil {
            throw BarscopeError.noRegion(frame, viewfinder)
        }
        settings.setViewfinder(viewfinder, animationFrames: animationFrames)
    }

    /// Changes the decoder settings (and engine) of the running pipeline, and of every restart after.
    public func setDecoder(_ scanner: ScannerSettings? = nil, engine: Engine? = nil) {
        settings.setDecoder(scanner, engine: engine)
    }

    /// Changes the overlay style of the running pipeline, and of every restart after.
    public func setStyle(_ style: OverlayStyle) { settings.setStyle(style) }

    /// Makes the running pipeline fail as a broken element would (fault drills; the restart policy's tests).
    public func injectError(_ message: String) { current.withLock { $0 }?.injectError(message) }

    // MARK: The supervisor (the controller's own thread)

    private func supervise() {
        var attempt = 0
        var session = 0
        var everPlayed = false
        var summary: RunSummary? = nil
        var recording = configuration.recording
        while true {
            let played = Atomic<Bool>(false)
            let retrying = attempt
            var c = settings.applied(to: configuration)
            c.recording = recording
            let run = ScanRun(
                configuration: c, settings: settings, histogram: latency, totals: runTotals, cycles: cycles,
                waitForRoom: { [outbox] in outbox.waitForRoom() },
                reached: { [self] state in
                    switch state {
                    case .playing:
                        if retrying > 0, !played.load(ordering: .relaxed) {
                            outbox.post(.recovered(attempts: retrying))
                        }
                        played.store(true, ordering: .relaxed)
                        stateBox.withLock { $0 = .playing }
                    case .paused:
                        if requests.withLock({ $0.paused }) { stateBox.withLock { $0 = .paused } }
                    }
                }
            ) { [outbox] event in outbox.post(event) }
            current.withLock { $0 = run }
            // The recording's files there before this attempt: the litter check below never touches them.
            let existing = c.recording.map { Set(Self.files(of: $0)) } ?? []
            let r = requests.withLock { $0 }
            if r.stop { run.stop(within: r.stopWithin) }
            if r.stopNow { run.stopNow() }
            if r.paused { run.pause() }
            var failure: BarscopeError? = nil
            var interrupted = false
            do {
                summary = try run.run()
                interrupted = summary?.interrupted ?? false
            } catch let e as BarscopeError {
                failure = e
            } catch {
                failure = .pipeline(GStreamerError(domain: "barscope", code: 0, message: "\(error)"))
            }
            // Let go of the finished run: its closures hold this controller.
            current.withLock { $0 = nil }
            let didPlay = played.load(ordering: .relaxed)
            // A run that never played (stopped while connecting) leaves its recording's files empty or a header
            // alone: no evidence, only litter.
            if let r = c.recording { Self.removeEmptyFiles(of: r, played: didPlay, keeping: existing) }
            everPlayed = everPlayed || didPlay
            let outcome = AttemptOutcome(input: c.input, played: didPlay, everPlayed: everPlayed, failure: failure)
            let stopped = interrupted || requests.withLock { $0.stop }
            guard !stopped, condition.restarts(outcome, policy: restart) else {
                stateBox.withLock { $0 = failure.map { .failed($0.description) } ?? .stopped }
                finish(summary: summary, failure: failure)
                return
            }
            // A run that played resets the count: the backoff is for a source that keeps failing to start.
            attempt = didPlay ? 1 : attempt + 1
            let reason =
                failure?.description
                ?? (c.input.isNetworkStream ? "\(c.input): the stream ended (the server closed it)" : "end of stream")
            if let max = backoff.maxAttempts, attempt > max {
                outbox.post(.gaveUp(attempts: attempt - 1, reason: reason))
                stateBox.withLock { $0 = .failed(reason) }
                finish(summary: summary, failure: failure ?? .badInput(reason))
                return
            }
            // The next run records to a file of its own: what this one wrote stays as it is.
            if let r = configuration.recording, didPlay {
                session += 1
                recording = r.session(session)
            }
            let delay = backoff.delay(attempt: attempt)
            stateBox.withLock { $0 = .restarting(attempt: attempt) }
            outbox.post(.reconnecting(attempt: attempt, delaySeconds: delay, reason: reason))
            // The backoff ends early when a stop is asked for (`stopAsked`), never by looking again and again.
            _ = stopAsked.wait(timeout: .now() + delay)
            if requests.withLock({ $0.stop }) {
                stateBox.withLock { $0 = failure.map { .failed($0.description) } ?? .stopped }
                finish(summary: summary, failure: failure)
                return
            }
        }
    }

    /// The files a recording has on disk (its segments').
    static func files(of r: Recording) -> [String] {
        guard r.segmentSeconds != nil else { return FileManager.default.fileExists(atPath: r.path) ? [r.path] : [] }
        var files: [String] = []
        var n = 0
        while FileManager.default.fileExists(atPath: r.segment(n)) {
            files.append(r.segment(n))
            n += 1
        }
        return files
    }

    /// Removes the files an attempt made and left empty, or all it made when it never played.
    static func removeEmptyFiles(of r: Recording, played: Bool, keeping existing: Set<String>) {
        for f in files(of: r)
        where !existing.contains(f)
            && (!played || ((try? FileManager.default.attributesOfItem(atPath: f))?[.size] as? Int) == 0)
        {
            try? FileManager.default.removeItem(atPath: f)
        }
    }

    private func finish(summary: RunSummary?, failure: BarscopeError?) {
        // Every event is delivered before anyone waiting hears of the end.
        outbox.close()
        continuation.finish()
        finishedCondition.lock()
        done.withLock { d in
            guard !d.finished else { return }
            d = (true, summary, failure)
        }
        finishedCondition.broadcast()
        finishedCondition.unlock()
    }
}
