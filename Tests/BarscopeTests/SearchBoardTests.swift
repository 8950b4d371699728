import TestSupport
import Testing

@testable import Barscope

/// Where tracked mode's rescans look for a known code: moved by its velocity, unless the last two sightings are too
/// far apart for motion (a cut).
@Suite(.suiteLimit) struct SearchBoardTests {
    static func code(at x: Double) -> Detection {
        Detection(
            type: "QR-Code", data: "a", quality: 1,
            polygon: [Point(x, 100), Point(x, 150), Point(x + 50, 150), Point(x + 50, 100)])
    }

    /// A code that moved 20 px a frame is looked for 20 px further each frame; one that moved 600 px in one frame
    /// (a 50-px code: the picture cut to another) is looked for where it was last seen, with no velocity (a code seen
    /// once), not 600 px further on, where the widened read would cover most of the frame.
    @Test func aCodeThatJumpedHasNoVelocity() throws {
        let board = SearchBoard()
        board.publish(0, [Self.code(at: 100)], search: true)
        board.publish(1, [Self.code(at: 120)], search: false)
        let moving = try #require(board.predicted(for: 2).first)
        #expect(moving.hasVelocity && abs(moving.detection.bounds.x - 140) <= 1, "\(moving)")
        board.publish(2, [Self.code(at: 720)], search: true)
        let jumped = try #require(board.predicted(for: 3).first)
        #expect(!jumped.hasVelocity, "\(jumped)")
        #expect(jumped.detection.bounds.x == 720)
    }

    /// A frame held for a search whose results are no longer kept (64 frames or more before the newest search
    /// finished) is handed back at once, with no new codes: held, it would never be handed back, and every frame
    /// after it would wait in order. A search not yet finished within that reach still holds it.
    @Test func aFrameForASearchLongFinishedIsNotHeld() {
        let board = SearchBoard()
        // A job never scanned here: its sample is never touched.
        let job = ScanPool.Job(frame: 120, ptsNs: nil, sample: OpaquePointer(bitPattern: 0x1)!)
        let held = SearchBoard.Held(job: job, found: [], gone: [], luma: [], width: 0, height: 0, view: nil)
        #expect(board.finishSearch(200, [Self.code(at: 100)]).isEmpty)
        #expect(board.hold(held, until: 200)?.count == 1, "a finished search's results are returned")
        #expect(board.hold(held, until: 100)?.isEmpty == true, "a search 100 frames older was held for")
        #expect(board.hold(held, until: 150) == nil, "a search within reach, not finished, holds the frame")
        #expect(board.finishSearch(150, []).count == 1)
    }
}
