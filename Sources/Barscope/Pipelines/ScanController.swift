import CBarscope
import Foundation
import Synchronization

/// When a controller starts its pipeline again by itself.
public enum RestartPolicy: String, Sendable, CaseIterable {
    /// Never: an error ends it.
    case never
    /// After an error (a failed element, a stalled source: the watchdog), with capped exponential backoff.
    case onError = "on-error"
    /// After an error and after a normal end of stream (a file played again, a camera that closed).
    case always
}

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

/// One named scanning pipeline under control, for programs that embed Barscope: start, pause, resume, stop,
/// its state, its events as an `AsyncStream` (the JSON Lines events are their encoding), live changes of the
/// viewfinder, decoder and style, and a restart policy with backoff. Several controllers run side by side in one
/// process, each with its own pipeline, state and events.
///
/// ```swift
/// let dock = ScanController(name: "dock", configuration: config, restart: .onError)
/// dock.start()
/// for await event in dock.events { if case .appeared(_, _, let code, _) = event { print(code.data) } }
/// ```
///
/// Sendable: the state, the current runner and the configuration are behind locks; the event stream's
/// continuation is thread-safe.
public final class ScanController: Sendable {
    public let name: String
    /// Every event of every run, in order, until the controller ends (then the stream finishes). Bounded: when
    /// nobody reads, the oldest events are dropped first (`bufferLimit`).
    public let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    private let observer: (@Sendable (Event) -> Void)?
    public let restart: RestartPolicy
    public let backoff: ReconnectPolicy

    private let configuration: Locked<RunConfiguration>
    private let current = Locked<ScanRunner?>(nil)
    private let stateBox = Locked<ControllerState>(.idle)
    private let stopRequested = Atomic<Bool>(false)
    private let pausedByUser = Atomic<Bool>(false)
    private let done = Locked<(finished: Bool, summary: RunSummary?)>((false, nil))
    private let finishedCondition = NSCondition()

    /// - Parameters:
    ///   - restart: when to start again by itself; `backoff` sets the waits (1, 2, 4 ... s) and the attempts.
    ///   - bufferLimit: events kept for a slow reader before the oldest are dropped.
    ///   - observer: also called with every event, at once, on the thread that made it (for programs that are
    ///     not async); it must not block.
    public init(
        name: String, configuration: RunConfiguration, restart: RestartPolicy = .never,
        backoff: ReconnectPolicy = ReconnectPolicy(), bufferLimit: Int = 4096,
        observer: (@Sendable (Event) -> Void)? = nil
    ) {
        self.name = name
        self.observer = observer
        self.restart = restart
        self.backoff = backoff
        self.configuration = Locked(configuration)
        (events, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(bufferLimit))
    }

    public var state: ControllerState { stateBox.withLock { $0 } }

    /// The last run's summary once the controller has ended.
    public var summary: RunSummary? { done.withLock { $0.summary } }

    /// Starts the pipeline on a thread of its own; returns at once. A second call does nothing.
    public func start() {
        let first = stateBox.withLock { s -> Bool in
            guard s == .idle else { return false }
            s = .starting
            return true
        }
        guard first else { return }
        let thread = Thread { [self] in runLoop() }
        thread.name = "barscope-\(name)"
        thread.start()
    }

    /// Pauses the pipeline (a file keeps its place; a live source's frames go unscanned and unrecorded).
    public func pause() {
        pausedByUser.store(true, ordering: .relaxed)
        current.withLock { $0?.pause() }
    }

    public func resume() {
        pausedByUser.store(false, ordering: .relaxed)
        current.withLock { $0?.resume() }
    }

    /// Stops: end of stream first (a recording is finished and playable), then the pipeline is torn down, no
    /// restart follows. Waits at most `timeout` seconds.
    /// - Returns: false when the controller had not ended within `timeout`.
    @discardableResult
    public func stop(timeout: Double = 15) -> Bool {
        stopRequested.store(true, ordering: .relaxed)
        current.withLock { $0?.stop() }
        let began = stateBox.withLock { s -> Bool in
            if s == .idle {
                s = .stopped
                return false
            }
            return true
        }
        if !began {
            finish(summary: nil)
            return true
        }
        return wait(timeout: timeout)
    }

    /// Waits until the controller has ended (stopped, end of stream, or failed).
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

    /// Changes the viewfinder of the running pipeline, and of every restart after.
    public func setViewfinder(_ viewfinder: Viewfinder, animationFrames: Int = 0) throws {
        try current.withLock { try $0?.setViewfinder(viewfinder, animationFrames: animationFrames) }
        configuration.withLock { $0.viewfinder = viewfinder }
    }

    /// Changes the decoder settings (and engine) of the running pipeline, and of every restart after.
    public func setDecoder(_ settings: ScannerSettings, engine: Engine? = nil) {
        current.withLock { $0?.setDecoder(settings, engine: engine) }
        configuration.withLock { c in
            c.scanner = settings
            if let engine { c.engine = engine }
        }
    }

    /// Changes the overlay style of the running pipeline, and of every restart after.
    public func setStyle(_ style: OverlayStyle) {
        current.withLock { $0?.setStyle(style) }
        configuration.withLock { $0.style = style }
    }

    /// Makes the running pipeline fail as a broken element would (fault drills; the restart policy's tests).
    public func injectError(_ message: String) { current.withLock { $0?.injectError(message) } }

    // MARK: The run loop (the controller's own thread)

    private func runLoop() {
        var attempt = 0
        var session = 0
        let recording = configuration.withLock { $0.recording }
        var summary: RunSummary? = nil
        while true {
            let played = Atomic<Bool>(false)
            let retrying = attempt
            let runner = ScanRunner(configuration: configuration.withLock { $0 }) { [self] event in
                if case .state(let s) = event {
                    if s == "playing" {
                        if retrying > 0, !played.load(ordering: .relaxed) {
                            publish(.recovered(attempts: retrying))
                        }
                        played.store(true, ordering: .relaxed)
                        stateBox.withLock { $0 = .playing }
                    } else if s == "paused", pausedByUser.load(ordering: .relaxed) {
                        stateBox.withLock { $0 = .paused }
                    }
                }
                publish(event)
            }
            current.withLock { $0 = runner }
            if stopRequested.load(ordering: .relaxed) { runner.stop() }
            if pausedByUser.load(ordering: .relaxed) { runner.pause() }
            var failure: BarscopeError? = nil
            do {
                summary = try runner.run()
            } catch let e as BarscopeError {
                failure = e
            } catch {
                failure = .pipeline(GStreamerError(domain: "barscope", code: 0, message: "\(error)"))
            }
            current.withLock { $0 = nil }
            let stopped = stopRequested.load(ordering: .relaxed) || bs_stop_requests() > 0
            let again = !stopped && (failure != nil ? restart != .never : restart == .always)
            guard again else {
                stateBox.withLock { $0 = failure.map { .failed($0.description) } ?? .stopped }
                finish(summary: summary)
                return
            }
            // A run that played resets the count: the backoff is for a source that keeps failing to start.
            attempt = played.load(ordering: .relaxed) ? 1 : attempt + 1
            let reason = failure?.description ?? "end of stream"
            if let max = backoff.maxAttempts, attempt > max {
                publish(.gaveUp(attempts: attempt - 1, reason: reason))
                stateBox.withLock { $0 = .failed(reason) }
                finish(summary: summary)
                return
            }
            // The next run records to a file of its own: what this one wrote stays as it is.
            if let r = recording, played.load(ordering: .relaxed) {
                session += 1
                configuration.withLock { $0.recording = r.session(session) }
            }
            let delay = backoff.delay(attempt: attempt)
            stateBox.withLock { $0 = .restarting(attempt: attempt) }
            publish(.reconnecting(attempt: attempt, delaySeconds: delay, reason: reason))
            let until = Date(timeIntervalSinceNow: delay)
            while Date() < until && !stopRequested.load(ordering: .relaxed) { Thread.sleep(forTimeInterval: 0.05) }
            if stopRequested.load(ordering: .relaxed) {
                stateBox.withLock { $0 = .stopped }
                finish(summary: summary)
                return
            }
        }
    }

    private func publish(_ event: Event) {
        observer?(event)
        continuation.yield(event)
    }

    private func finish(summary: RunSummary?) {
        finishedCondition.lock()
        done.withLock { d in
            guard !d.finished else { return }
            d = (true, summary)
        }
        finishedCondition.broadcast()
        finishedCondition.unlock()
        continuation.finish()
    }
}
