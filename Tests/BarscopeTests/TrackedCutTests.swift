import TestSupport
import Testing

@testable import Barscope

/// Tracked mode at a cut: a frame that lost every code of two or more at once, none where it should be, stops
/// rescanning around them (every line, ever wider) and the board forgets them; one code lost is followed as before.
@Suite(.suiteLimit) struct TrackedCutTests {
    /// Two CODE-128 labels side by side on white (2-px modules), or the same white without them.
    static func frame(withCodes: Bool) throws -> AccuracyTests.Picture {
        let left = AccuracyTests.Picture(try Code128.symbol("CUT-LEFT-1"), module: 2)
        let right = AccuracyTests.Picture(try Code128.symbol("CUT-RIGHT-2"), module: 2)
        let width = left.width + right.width + 200
        let height = max(left.height, right.height) + 120
        var canvas = AccuracyTests.Picture(
            pixels: [UInt8](repeating: 255, count: width * height), width: width, height: height)
        guard withCodes else { return canvas }
        for (part, x0) in [(left, 40), (right, left.width + 160)] {
            for y in 0..<part.height {
                for x in 0..<part.width { canvas.pixels[(60 + y) * width + x0 + x] = part.pixels[y * part.width + x] }
            }
        }
        return canvas
    }

    static func read(_ picture: AccuracyTests.Picture) -> [Detection] {
        picture.with { BarcodeReader().read($0, mapping: CropMapping(region: nil), viewfinder: nil, frame: 0) }
    }

    /// A frame after a search that lost the known codes in a cut does not look for them again around where that
    /// search saw them (it just did, every line); a code the search found that the frame did not know is still
    /// looked for. At a clip's loop every stream of a service looked again, 20 ms a frame each, and frames were
    /// dropped (RTSP, 4 streams: 1-4 of 1800 a stream; none after).
    @Test func aCutsCodesAreNotLookedForAgain() throws {
        let seen = Self.read(try Self.frame(withCodes: true))
        let left = try #require(seen.first { $0.data == "CUT-LEFT-1" })
        let right = try #require(seen.first { $0.data == "CUT-RIGHT-2" })
        // The search saw both; the frame after it knew only the left one, and lost it in a cut.
        #expect(ScanStage.toCatchUp([left, right], found: [], gone: [left]).map(\.data) == ["CUT-RIGHT-2"])
        // Found, or lost in the cut: nothing to look for.
        #expect(ScanStage.toCatchUp([left, right], found: [right], gone: [left]).isEmpty)
        // No cut: both are looked for.
        #expect(ScanStage.toCatchUp([left, right], found: [], gone: []).count == 2)
    }

    @Test func everyCodeLostAtOnceIsACut() throws {
        let seen = Self.read(try Self.frame(withCodes: true))
        #expect(Set(seen.map(\.data)) == ["CUT-LEFT-1", "CUT-RIGHT-2"], "\(seen)")
        let expected = seen.map { Expected(detection: $0, hasVelocity: true, framesSince: 1, speed: 3) }
        let scanner = BarcodeReader()
        // Still there: found, no cut.
        let there = try Self.frame(withCodes: true).with {
            TrackedRegions.rescanUnlessCut(
                $0, around: expected, mapping: CropMapping(region: nil), viewfinder: nil,
                with: scanner)
        }
        #expect(!there.cut)
        #expect(Set(there.found.map(\.data)) == ["CUT-LEFT-1", "CUT-RIGHT-2"])
        // Both gone in one frame: a cut, and nothing read.
        let gone = try Self.frame(withCodes: false).with {
            TrackedRegions.rescanUnlessCut(
                $0, around: expected, mapping: CropMapping(region: nil), viewfinder: nil,
                with: scanner)
        }
        #expect(gone.cut && gone.found.isEmpty, "\(gone)")
        // One code lost is not a cut (it turned, or blurred): it is looked for more widely, as before.
        let one = try Self.frame(withCodes: false).with {
            TrackedRegions.rescanUnlessCut(
                $0, around: [expected[0]], mapping: CropMapping(region: nil),
                viewfinder: nil, with: scanner)
        }
        #expect(!one.cut)
        // Codes last seen long ago are not evidence of a cut either: their loss is not sudden.
        let stale = expected.map { e in
            var e = e
            e.framesSince = 5
            return e
        }
        let old = try Self.frame(withCodes: false).with {
            TrackedRegions.rescanUnlessCut(
                $0, around: stale, mapping: CropMapping(region: nil), viewfinder: nil,
                with: scanner)
        }
        #expect(!old.cut)
    }

    /// The board forgets the codes a cut lost, unless a later frame (another worker's) has seen them since.
    @Test func aCutForgetsWhatItLostButNotWhatWasSeenSince() {
        let board = SearchBoard()
        let a = SearchBoardTests.code(at: 100)
        var b = SearchBoardTests.code(at: 400)
        b.data = "b"
        board.publish(0, [a, b], search: true)
        board.publish(3, [b], search: false)
        board.forget([a, b], before: 2)
        #expect(board.predicted(for: 4).map(\.detection.data) == ["b"])
    }
}
