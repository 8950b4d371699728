import Foundation

/// Hands each frame's detections from the scanner branch to the overlay branch.
///
/// Frame-accurate (files): the overlay waits for the results of its own frame, so frame N is annotated with the
/// detections of frame N. Live: the overlay takes the newest results and never waits.
final class ResultBoard: @unchecked Sendable {
    // Sendable: every field is read and written under `condition`.
    private let condition = NSCondition()
    private var byPts: [UInt64: [Detection]] = [:]
    private var latest: [Detection] = []
    private var ended = false
    private let frameAccurate: Bool

    init(frameAccurate: Bool) { self.frameAccurate = frameAccurate }

    func publish(ptsNs: UInt64?, _ detections: [Detection]) {
        condition.lock()
        latest = detections
        if frameAccurate, let p = ptsNs { byPts[p] = detections }
        condition.broadcast()
        condition.unlock()
    }

    /// The detections to draw on the frame with this pts. Waits (frame-accurate only) up to `timeout` seconds.
    /// - Returns: nil when the wait timed out.
    func detections(forPts ptsNs: UInt64?, timeout: Double) -> [Detection]? {
        condition.lock()
        defer { condition.unlock() }
        guard frameAccurate, let p = ptsNs else { return latest }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while byPts[p] == nil && !ended {
            if !condition.wait(until: deadline) { return nil }
        }
        // The overlay asks for every frame in order, so this frame's entry is the only one done with; earlier ones
        // can linger only if frames vanished between the branches, and are cleared then.
        let found = byPts.removeValue(forKey: p) ?? []
        if byPts.count > 64 { byPts = byPts.filter { $0.key > p } }
        return found
    }

    /// No more results will come (end of stream, error, shutdown): release any waiting overlay.
    func end() {
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
    }
}
