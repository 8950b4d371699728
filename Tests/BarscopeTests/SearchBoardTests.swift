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
}
