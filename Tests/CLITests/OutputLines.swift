import Barscope
import Foundation
import Synchronization
import TestSupport
import Testing

/// The lines a running child has printed so far (its events), read by a `PipeDrain` until the end.
final class OutputLines: Sendable {
    private let drain: PipeDrain
    init(_ handle: FileHandle) { drain = PipeDrain(handle) }
    var all: [String] { drain.lines }
    /// Whether the child has closed its end (every line is in `all`).
    var hasEnded: Bool { drain.hasEnded }

    /// Waits up to `seconds` for a line (from index `start` on) that matches; returns its index.
    func waitFor(_ seconds: Double, from start: Int = 0, _ match: (String) -> Bool) -> Int? {
        var found: Int? = nil
        pollUntil(seconds) {
            let now = all
            if now.count > start, let i = now[start...].firstIndex(where: match) { found = i }
            return found != nil || hasEnded
        }
        if found == nil, hasEnded {
            // Ended: the lines are all there; one last look at what came with the end.
            let now = all
            if now.count > start { found = now[start...].firstIndex(where: match) }
        }
        return found
    }

    /// Waits up to `seconds` for the child to close its end; returns every line.
    func waitForEnd(_ seconds: Double) -> [String] {
        pollUntil(seconds) { hasEnded }
        return all
    }

    /// The frame number of a `detection` event line, -1 for any other line.
    static func detectionFrame(_ line: String) -> Int {
        guard line.hasPrefix(#"{"event":"detection""#),
            let event = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        else { return -1 }
        return event["frame"] as? Int ?? -1
    }
}
