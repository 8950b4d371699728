/// How often a code is reported, as the scanner SDKs offer: each time it comes into view (a track), once for the
/// whole session, or again only after some time. (`--every-frame` reports every code in every frame instead.)
public enum DuplicatePolicy: Sendable, Equatable, CustomStringConvertible {
    /// `appeared` when a code comes into view, `lost` when it leaves: the default.
    case everyTrack
    /// A code (type and text) is reported once per run, however often it leaves and comes back.
    case oncePerSession
    /// A code is reported again only when at least this many milliseconds of stream time have passed since it
    /// was last reported.
    case after(milliseconds: Int)

    /// Parses `tracks`, `once` or `after:MS`.
    public static func parse(_ text: String) throws -> DuplicatePolicy {
        switch text {
        case "tracks": return .everyTrack
        case "once": return .oncePerSession
        default:
            if text.hasPrefix("after:"), let ms = Int(text.dropFirst(6)), ms >= 0 { return .after(milliseconds: ms) }
            throw BarscopeError.badValue("report '\(text)': expected tracks, once or after:MS (e.g. after:5000)")
        }
    }

    public var description: String {
        switch self {
        case .everyTrack: return "tracks"
        case .oncePerSession: return "once"
        case .after(let ms): return "after:\(ms)"
        }
    }
}

/// Applies a ``DuplicatePolicy`` to the tracker's events: an `appeared` that repeats a code reported too recently
/// is held back, and so is the `lost` of its track. Used by one thread at a time (the in-order delivery).
struct DuplicateFilter {
    let policy: DuplicatePolicy
    /// When each code (type, text) was last reported, in stream nanoseconds (or frames at 30 per second when the
    /// stream has no timestamps).
    private var lastReported: [String: UInt64] = [:]
    /// Tracks whose `appeared` went out: only their `lost` follows.
    private var reportedTracks = Set<Int>()

    init(policy: DuplicatePolicy) { self.policy = policy }

    mutating func admit(_ event: Event) -> Bool {
        switch event {
        case .appeared(let frame, let pts, let d, let track):
            let key = d.type + "\u{0}" + d.data
            let now = pts ?? UInt64(frame) * 33_333_333
            let report: Bool
            switch policy {
            case .everyTrack: report = true
            case .oncePerSession: report = lastReported[key] == nil
            case .after(let ms):
                report = lastReported[key].map { now >= $0 && now - $0 >= UInt64(ms) * 1_000_000 } ?? true
            }
            if report {
                lastReported[key] = now
                reportedTracks.insert(track)
            }
            return report
        case .lost(_, _, let track, _, _, _):
            return reportedTracks.remove(track) != nil
        default:
            return true
        }
    }
}
