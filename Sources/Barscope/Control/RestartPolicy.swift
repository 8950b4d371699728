import Foundation

/// When a controller starts its pipeline again by itself.
public enum RestartPolicy: String, Sendable, CaseIterable {
    /// Never: an error ends it.
    case never
    /// After an error (a failed element, a stalled source: the watchdog), with capped exponential backoff.
    case onError = "on-error"
    /// After an error and after a normal end of stream (a file played again, a camera that closed).
    case always
}

/// The waits between attempts: capped exponential backoff, a bounded number of attempts.
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

/// How one attempt ended, for the restart decision.
public struct AttemptOutcome: Sendable {
    public var input: InputSource
    /// Frames flowed (the pipeline reached PLAYING).
    public var played: Bool
    /// Some attempt of this controller played, this one or an earlier one.
    public var everPlayed: Bool
    /// nil: it reached the end of its stream.
    public var failure: BarscopeError?
}

/// Which ended attempts a controller's policy may restart. Whatever the condition, a mistake in what the user gave
/// (a wrong password, a missing file, a bad value) on an attempt that never played is not retried: it fails at once,
/// naming the mistake, rather than after minutes of backoff.
public struct RestartCondition: Sendable {
    let test: @Sendable (AttemptOutcome) -> Bool

    public init(_ test: @escaping @Sendable (AttemptOutcome) -> Bool) { self.test = test }

    /// Every attempt the policy names.
    public static let any = RestartCondition { _ in true }

    /// The command line's rule: only network streams (RTSP), and only after they have played once: a stream that
    /// never played is a mistake in the URI. A network stream that ends by itself was closed by its server.
    public static let networkStreamsThatPlayed = RestartCondition { $0.input.isNetworkStream && $0.everPlayed }

    /// Whether to restart after `outcome` under `policy`.
    func restarts(_ outcome: AttemptOutcome, policy: RestartPolicy) -> Bool {
        if let f = outcome.failure, f.isUsersMistake, !outcome.everPlayed { return false }
        guard test(outcome) else { return false }
        switch policy {
        case .never: return false
        case .always: return true
        // A network stream's end of stream is a disconnection (cameras do not end).
        case .onError: return outcome.failure != nil || outcome.input.isNetworkStream
        }
    }
}

extension InputSource {
    /// An RTSP stream: it reconnects under the command line's rule.
    public var isNetworkStream: Bool {
        if case .uri(let u, _) = self { return u.lowercased().hasPrefix("rtsp") }
        return false
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
