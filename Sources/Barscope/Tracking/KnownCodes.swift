import Foundation

/// The codes the frames just before this one read, and where: a code ZBar misses in one frame of a run of frames
/// that read it (motion blur, a glint, a tilt it does not follow) is looked for again where it was
/// (`BarcodeReader.withKnownCodes`), and only its own text counts there. So a frame is read with what the frames
/// before it saw, as a viewer reads a blurred frame of a clip it is watching, and never reports a text no frame
/// read whole.
///
/// Untracked runs only (tracked mode rescans around its known codes on its own, `SearchBoard`). Frames are scanned
/// by several workers at once; each frame's main read runs in parallel, and its second look waits for the frames
/// before it to be recorded, so that each frame sees exactly the frames before it: a file scanned twice, with any
/// number of threads, gives the same events. A live stream's frames never wait: they use what has been recorded.
final class KnownCodes: @unchecked Sendable {
    // Sendable: every field is guarded by `condition`.
    private let condition = CountedCondition()
    struct Code: Equatable {
        let type: String
        let data: String
        /// Where the last frame that read it read it (full-frame pixels).
        var polygon: [Point]
        var sequence: Int
    }
    /// Each recent frame's reads, by the frame's number (the pool's order of dispatch, from 0, without gaps).
    private var history: [Int: [Code]] = [:]
    /// The first frame not yet recorded (frames may finish out of order), and the first still kept.
    private var next = 0
    private var oldest = 0
    private var ended = false
    /// How many frames back the codes come from: the frames from `lag` to `lag + window - 1` before this one. A
    /// frame never waits for the one just before it, which a second worker is most often still reading, so the
    /// workers do not take turns (docs/decisions.md has what that wait cost). `window`: a code missed in that many
    /// frames in a row is no longer looked for (it left, or it is unreadable here): a look that finds nothing costs
    /// as much as one that finds.
    static let lag = 2
    let window: Int
    /// Whether a frame's second look waits for the frames it uses (a file), or uses what is there (live).
    let inOrder: Bool

    init(window: Int, inOrder: Bool) {
        self.window = max(1, window)
        self.inOrder = inOrder
    }

    /// The codes read in the frames `lag` to `lag + window - 1` before `sequence` (the latest place of each):
    /// for a file, once those frames have been recorded.
    func recent(before sequence: Int) -> [Code] {
        condition.lock()
        defer { condition.unlock() }
        let last = sequence - Self.lag
        guard last >= 0 else { return [] }
        // Those frames are with a worker already, or done (frames are handed out in order), so this wait ends; the
        // deadline only guards against a worker that never records (a bug), at the cost of determinism.
        let deadline = Date().addingTimeInterval(30)
        while inOrder, !ended, next <= last, condition.wait(until: deadline) {}
        var codes: [Code] = []
        for frame in max(0, last - window + 1)...last {
            for c in history[frame] ?? [] {
                if let i = codes.firstIndex(where: { $0.type == c.type && $0.data == c.data }) {
                    codes[i] = c
                } else {
                    codes.append(c)
                }
            }
        }
        return codes
    }

    /// One frame's reads (every frame is recorded, with nothing read or not).
    func record(_ sequence: Int, _ found: [Detection]) {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        history[sequence] = found.map { Code(type: $0.type, data: $0.data, polygon: $0.polygon, sequence: sequence) }
        while history[next] != nil { next += 1 }
        // Frames no later frame will ask for: every frame from `next` on still asks for those from `next - lag -
        // window + 1`.
        while oldest < next - Self.lag - window {
            history[oldest] = nil
            oldest += 1
        }
    }

    /// No more frames: nothing waits any longer.
    func end() {
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
    }
}
