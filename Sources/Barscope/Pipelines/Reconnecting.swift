import CBarscope
import Foundation
import Synchronization

/// How a network source comes back after it fails: capped exponential backoff, a bounded number of attempts.
public struct ReconnectPolicy: Hashable, Sendable {
    public var initialDelay: Double = 1
    public var maxDelay: Double = 30
    /// nil: keep trying for ever.
    public var maxAttempts: Int? = 10
    public init(initialDelay: Double = 1, maxDelay: Double = 30, maxAttempts: Int? = 10) {
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
        self.maxAttempts = maxAttempts
    }
    /// The wait before attempt `n` (1-based): 1, 2, 4, ... seconds, at most `maxDelay`.
    public func delay(attempt n: Int) -> Double { min(maxDelay, initialDelay * pow(2, Double(max(0, n - 1)))) }
}

/// Stops a reconnecting run from any thread: the current pipeline finishes (EOS), and no reconnection follows.
public final class RunControl: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let current = Locked<ScanRunner?>(nil)
    public init() {}
    public func stop() {
        stopped.store(true, ordering: .relaxed)
        current.withLock { $0?.stop() }
    }
    var isStopped: Bool { stopped.load(ordering: .relaxed) }
    /// Live changes, passed to the pipeline of the moment and kept for the ones rebuilt after it.
    public func pause() {
        paused.store(true, ordering: .relaxed)
        current.withLock { $0?.pause() }
    }
    public func resume() {
        paused.store(false, ordering: .relaxed)
        current.withLock { $0?.resume() }
    }
    public func setViewfinder(_ v: Viewfinder, animationFrames: Int = 0) throws {
        try current.withLock { try $0?.setViewfinder(v, animationFrames: animationFrames) }
        changes.withLock { $0.viewfinder = v }
    }
    public func setDecoder(_ settings: ScannerSettings) {
        current.withLock { $0?.setDecoder(settings) }
        changes.withLock { $0.settings = settings }
    }
    public func setEngine(_ engine: Engine) {
        let settings = changes.withLock { $0.settings }
        current.withLock { r in r.map { $0.setDecoder(settings ?? $0.configuration.scanner, engine: engine) } }
        changes.withLock { $0.engine = engine }
    }
    public func setStyle(_ style: OverlayStyle) {
        current.withLock { $0?.setStyle(style) }
        changes.withLock { $0.style = style }
    }
    /// The configuration of the next pipeline: the first one's, with the live changes since.
    func applying(to c: RunConfiguration) -> RunConfiguration {
        var c = c
        changes.withLock { ch in
            if let v = ch.viewfinder { c.viewfinder = v }
            if let s = ch.settings { c.scanner = s }
            if let e = ch.engine { c.engine = e }
            if let s = ch.style { c.style = s }
        }
        return c
    }
    private struct Changes {
        var viewfinder: Viewfinder? = nil
        var settings: ScannerSettings? = nil
        var engine: Engine? = nil
        var style: OverlayStyle? = nil
    }
    private let changes = Locked(Changes())
    private let paused = Atomic<Bool>(false)

    /// The running pipeline's progress (nil between runs).
    public var progress: ScanProgress? { current.withLock { $0?.progress } }
    func detach(_ runner: ScanRunner) {
        current.withLock { if $0 === runner { $0 = nil } }
    }
    func attach(_ runner: ScanRunner) {
        current.withLock { $0 = runner }
        if isStopped { runner.stop() }
        if paused.load(ordering: .relaxed) { runner.pause() }
    }
}

extension ScanRunner {
    /// Runs, and when an RTSP source fails (the server went away, the network dropped), rebuilds the whole
    /// pipeline and runs again after the policy's backoff, saying so in events: `reconnecting` (attempt, delay,
    /// reason), `recovered` once frames flow again, `gave-up` when the attempts run out. A recording continues in
    /// a new file per reconnection (`NAME-1.mp4`, `NAME-2.mp4`, ...), so what was written stays playable.
    /// An RTSP stream that ends without being asked to (the server closed it) counts as a disconnection too:
    /// cameras do not end. Other sources, stop requests (signals, `control`) end the run as `run()` does.
    public static func runReconnecting(
        _ configuration: RunConfiguration, policy: ReconnectPolicy, control: RunControl = RunControl(),
        onEvent: @escaping @Sendable (Event) -> Void
    ) throws -> RunSummary {
        var c = configuration
        var attempt = 0
        var session = 0
        // Reconnecting is for a stream that worked and failed. One that never played (a closed port, a wrong
        // password, a wrong path) is a mistake in the URI: retrying it for minutes would only hide the message.
        var everPlayed = false
        let networked: Bool = {
            if case .uri(let u, _) = configuration.input { return u.lowercased().hasPrefix("rtsp") }
            return false
        }()
        while true {
            let resumed = attempt > 0
            let attemptsSoFar = attempt
            let recovered = Atomic<Bool>(false)
            let played = Atomic<Bool>(false)
            let runner = ScanRunner(configuration: control.applying(to: c)) { event in
                if case .state("playing") = event { played.store(true, ordering: .relaxed) }
                // The first frame scanned after a reconnection: it is back.
                if resumed, !recovered.load(ordering: .relaxed), case .state("playing") = event {
                    recovered.store(true, ordering: .relaxed)
                    onEvent(.recovered(attempts: attemptsSoFar))
                }
                onEvent(event)
            }
            control.attach(runner)
            // Let go of the finished pipeline: the control outlives it, and its event handler may hold the control.
            defer { control.detach(runner) }
            do {
                let summary = try runner.run()
                guard networked, !summary.interrupted, !control.isStopped, bs_stop_requests() == 0 else {
                    return summary
                }
                throw BarscopeError.badInput("\(configuration.input): the stream ended (the server closed it)")
            } catch let error as BarscopeError {
                if played.load(ordering: .relaxed) { everPlayed = true }
                guard networked, everPlayed, bs_stop_requests() == 0, !control.isStopped else { throw error }
                attempt = recovered.load(ordering: .relaxed) ? 1 : attempt + 1
                if let max = policy.maxAttempts, attempt > max {
                    onEvent(.gaveUp(attempts: attempt - 1, reason: error.description))
                    throw error
                }
                let delay = policy.delay(attempt: attempt)
                onEvent(.reconnecting(attempt: attempt, delaySeconds: delay, reason: error.description))
                // Wait, but a stop request ends the wait (and the run).
                let until = Date(timeIntervalSinceNow: delay)
                while Date() < until {
                    if bs_stop_requests() > 0 || control.isStopped { throw error }
                    Thread.sleep(forTimeInterval: 0.1)
                }
                // A session that played has its file; one that never connected wrote nothing worth keeping.
                if let r = configuration.recording, played.load(ordering: .relaxed) {
                    session += 1
                    c.recording = r.session(session)
                }
            }
        }
    }
}

extension Recording {
    /// The file of the n-th reconnection: `dock.mp4` → `dock-1.mp4`.
    public func session(_ n: Int) -> Recording {
        var r = self
        let ext = "." + container.rawValue
        let stem = path.hasSuffix(ext) ? String(path.dropLast(ext.count)) : path
        r.path = "\(stem)-\(n)\(ext)"
        return r
    }
}
