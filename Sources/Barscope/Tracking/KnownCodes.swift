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
    private let condition = NSCondition()
    struct Code: Equatable {
        let type: String
        let data: String
        /// Where the last frame that read it read it (full-frame pixels).
        var polygon: [Point]
        var sequence: Int
    }
    private var codes: [Code] = []
    /// Frames recorded out of order, and the first frame not yet recorded (frames are numbered from 0, the pool's
    /// order of dispatch, without gaps).
    private var early: Set<Int> = []
    private var next = 0
    private var ended = false
    /// A code last read this many frames ago or more is no longer looked for (the tracker's own count for a code
    /// that left: `tracking.lost-after-frames`).
    let forgetAfter: Int
    /// Whether a frame's second look waits for the frames before it (a file), or uses what is there (live).
    let inOrder: Bool

    init(forgetAfter: Int, inOrder: Bool) {
        self.forgetAfter = max(1, forgetAfter)
        self.inOrder = inOrder
    }

    /// The codes read in the frames before `sequence`, not longer than `forgetAfter` ago: for a file, once every
    /// frame before it has been recorded.
    func recent(before sequence: Int) -> [Code] {
        condition.lock()
        defer { condition.unlock() }
        // A frame before this one is always with a worker already (frames are handed out in order), so this wait
        // ends; the deadline only guards against a worker that never records (a bug), at the cost of determinism.
        let deadline = Date().addingTimeInterval(30)
        while inOrder, !ended, next < sequence, condition.wait(until: deadline) {}
        return codes.filter { $0.sequence < sequence && sequence - $0.sequence < forgetAfter }
    }

    /// One frame's reads (every frame is recorded, with nothing read or not).
    func record(_ sequence: Int, _ found: [Detection]) {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        for d in found {
            if let i = codes.firstIndex(where: { $0.type == d.type && $0.data == d.data }) {
                guard codes[i].sequence < sequence else { continue }
                codes[i].polygon = d.polygon
                codes[i].sequence = sequence
            } else {
                codes.append(Code(type: d.type, data: d.data, polygon: d.polygon, sequence: sequence))
            }
        }
        early.insert(sequence)
        while early.remove(next) != nil { next += 1 }
        let newest = next - 1
        codes.removeAll { newest - $0.sequence >= forgetAfter }
    }

    /// No more frames: nothing waits any longer.
    func end() {
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
    }
}
