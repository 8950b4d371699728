import TestSupport
import Testing

@testable import Barscope

/// Where tracked mode's gated searches look, on made pictures: a flat grey frame with noise, and a patch that comes.
@Suite(.suiteLimit) struct ChangedAreasTests {
    static let width = 640
    static let height = 360

    /// A grey frame with ±3 levels of noise (a camera's, a codec's), and a black-and-white striped patch at `patch`.
    static func frame(seed: UInt64, patch: PixelRect? = nil) -> [UInt8] {
        var rng = seed | 1
        var pixels = [UInt8](repeating: 0, count: width * height)
        for i in 0..<pixels.count {
            rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            pixels[i] = UInt8(128 + Int(rng >> 61) - 3)
        }
        if let p = patch {
            for y in p.y..<p.maxY {
                for x in p.x..<p.maxX { pixels[y * width + x] = (x / 3) % 2 == 0 ? 20 : 235 }
            }
        }
        return pixels
    }

    static func areas(_ changes: ChangedAreas, _ pixels: [UInt8]) -> [PixelRect]? {
        pixels.withUnsafeBytes {
            changes.areas(in: LumaImage(base: $0.baseAddress!, width: width, height: height, stride: width))
        }
    }

    @Test func aPatchThatComesIsTheOnlyAreaRead() throws {
        let changes = ChangedAreas(wholeEvery: 8)
        #expect(Self.areas(changes, Self.frame(seed: 1)) == nil, "the first search reads the whole frame")
        #expect(Self.areas(changes, Self.frame(seed: 2)) == [], "noise alone changes nothing")
        let patch = PixelRect(x: 200, y: 100, width: 90, height: 60)
        let got = try #require(Self.areas(changes, Self.frame(seed: 3, patch: patch)))
        #expect(got.count == 1)
        let area = try #require(got.first)
        // The patch's blocks grown by two blocks (32 px) each way, on the 16-px grid.
        #expect(area == PixelRect(x: 160, y: 64, width: 176, height: 128), "\(area)")
        #expect(area.x <= patch.x - 32 && area.maxX >= patch.maxX + 32 - 16)
        // Still there, not changing: kept for three searches (a code blurred while it moved is read when it
        // settles), then nothing.
        #expect(Self.areas(changes, Self.frame(seed: 4, patch: patch)) == got)
        #expect(Self.areas(changes, Self.frame(seed: 5, patch: patch)) == got)
        #expect(Self.areas(changes, Self.frame(seed: 6, patch: patch)) == [])
        // The eighth search reads the whole frame whatever changed.
        #expect(Self.areas(changes, Self.frame(seed: 7, patch: patch)) == [])
        #expect(Self.areas(changes, Self.frame(seed: 8, patch: patch)) == nil)
    }

    @Test func twoPatchesAreTwoAreasAndAWholeChangeIsTheWholeFrame() throws {
        let changes = ChangedAreas(wholeEvery: 100)
        _ = Self.areas(changes, Self.frame(seed: 1))
        let a = PixelRect(x: 20, y: 20, width: 50, height: 40)
        let b = PixelRect(x: 500, y: 280, width: 60, height: 50)
        var both = Self.frame(seed: 2, patch: a)
        for y in b.y..<b.maxY {
            for x in b.x..<b.maxX { both[y * Self.width + x] = 0 }
        }
        let got = try #require(Self.areas(changes, both))
        #expect(got.count == 2, "\(got)")
        #expect(got.contains { $0.intersects(a) } && got.contains { $0.intersects(b) })
        #expect(got.allSatisfy { !$0.intersects(a) || !$0.intersects(b) })
        // The light changes everywhere: more than half the frame, read whole.
        let darker = Self.frame(seed: 3).map { $0 &- 40 }
        #expect(Self.areas(changes, darker) == nil)
        // Then still: nothing (that search read every block). Kept searched, the changed blocks made the next two
        // searches whole as well (a cut: a clip played again, on every stream at once).
        #expect(Self.areas(changes, Self.frame(seed: 4).map { $0 &- 40 }) == [])
    }

    /// Bars that slid along by a few pixels keep each block's mean and contrast, not its pixels: still a change
    /// (a code moving through the frame is searched where it is).
    @Test func barsThatSlidAlongAreAChange() throws {
        let changes = ChangedAreas(wholeEvery: 100)
        let patch = PixelRect(x: 320, y: 160, width: 160, height: 96)
        func bars(shift: Int) -> [UInt8] {
            var pixels = Self.frame(seed: 1, patch: nil)
            for y in patch.y..<patch.maxY {
                for x in patch.x..<patch.maxX { pixels[y * Self.width + x] = ((x + shift) / 4) % 2 == 0 ? 30 : 220 }
            }
            return pixels
        }
        _ = Self.areas(changes, bars(shift: 0))
        #expect(Self.areas(changes, bars(shift: 0)) == [])
        let got = try #require(Self.areas(changes, bars(shift: 4)))
        #expect(got.count == 1 && got[0].intersects(patch) && got[0].width >= patch.width, "\(got)")
    }

    /// A code read in this frame explains the change where it is: a patch that moved within a known code's area is
    /// not searched; a patch that comes beside it is, and the known area's blocks are left out of its read.
    @Test func aKnownCodesOwnMotionIsNotSearched() throws {
        let changes = ChangedAreas(wholeEvery: 100)
        _ = Self.areas(changes, Self.frame(seed: 1))
        let code = PixelRect(x: 200, y: 100, width: 96, height: 64)
        let known = [code.expanded(by: 24)]
        func search(_ pixels: [UInt8]) -> [PixelRect]? {
            pixels.withUnsafeBytes {
                changes.areas(
                    in: LumaImage(base: $0.baseAddress!, width: Self.width, height: Self.height, stride: Self.width),
                    known: known)
            }
        }
        #expect(search(Self.frame(seed: 2, patch: code)) == [], "the known code's own change was searched")
        // Another patch comes 160 px to the right: it alone is read.
        let other = PixelRect(x: 456, y: 100, width: 64, height: 64)
        var both = Self.frame(seed: 3, patch: code)
        for y in other.y..<other.maxY {
            for x in other.x..<other.maxX { both[y * Self.width + x] = 0 }
        }
        let got = try #require(search(both))
        #expect(got.count == 1 && got[0].intersects(other) && !got[0].contains(Point(240, 130)), "\(got)")
        // Without the code known, both are read.
        let plain = try #require(Self.areas(changes, Self.frame(seed: 4)))
        #expect(plain.contains { $0.intersects(code) }, "\(plain)")
    }

    @Test func aNewFrameSizeStartsAgainWhole() {
        let changes = ChangedAreas(wholeEvery: 100)
        _ = Self.areas(changes, Self.frame(seed: 1))
        #expect(Self.areas(changes, Self.frame(seed: 2)) == [])
        let small = [UInt8](repeating: 128, count: 320 * 180)
        let got = small.withUnsafeBytes {
            changes.areas(in: LumaImage(base: $0.baseAddress!, width: 320, height: 180, stride: 320))
        }
        #expect(got == nil)
    }

    static func unexplained(
        _ changes: ChangedAreas, _ pixels: [UInt8], explained: [PixelRect] = [], budget: Int? = nil
    ) -> [PixelRect] {
        pixels.withUnsafeBytes {
            changes.unexplained(
                in: LumaImage(base: $0.baseAddress!, width: width, height: height, stride: width),
                explained: explained, budget: budget)
        }
    }

    /// Between searches: a patch that came since the search before is found on the frame it comes, leaving the
    /// search before's picture as it was (the next search still sees the patch come); what a known code explains is
    /// left out; nothing is found before the first search or in noise.
    @Test func aPatchThatComesBetweenSearchesIsFoundAtOnce() throws {
        let changes = ChangedAreas(wholeEvery: 100)
        let patch = PixelRect(x: 200, y: 100, width: 90, height: 60)
        #expect(Self.unexplained(changes, Self.frame(seed: 1, patch: patch)).isEmpty, "no search yet")
        _ = Self.areas(changes, Self.frame(seed: 1))
        #expect(Self.unexplained(changes, Self.frame(seed: 2)).isEmpty, "noise alone changes nothing")
        let got = Self.unexplained(changes, Self.frame(seed: 3, patch: patch))
        #expect(got == [PixelRect(x: 160, y: 64, width: 176, height: 128)], "\(got)")
        #expect(
            Self.unexplained(changes, Self.frame(seed: 4, patch: patch)) == got, "the search before's picture moved")
        #expect(
            Self.unexplained(changes, Self.frame(seed: 5, patch: patch), explained: [patch.expanded(by: 24)]).isEmpty,
            "a known code's change was searched")
        #expect(Self.areas(changes, Self.frame(seed: 6, patch: patch)) == got, "the next search lost the patch")
    }

    /// Within the budget, the group of blocks that changed most first (a code that came changes every block it
    /// covers); an edge that moved (a strip one block wide, as beside a moving card) is not read; a light switched
    /// on changes too much and is left to the next search.
    @Test func theMostChangedComesFirstWithinTheBudget() throws {
        let changes = ChangedAreas(wholeEvery: 100)
        _ = Self.areas(changes, Self.frame(seed: 1))
        // A 64x64 patch (16 blocks changed, 64 with the margin) and a 48x48 one (9 changed, 49 with the margin):
        // 100 blocks of budget take the larger, and leave too little for the other; an edge 4 px wide is never read.
        let large = PixelRect(x: 256, y: 128, width: 64, height: 64)
        var pixels = Self.frame(seed: 2, patch: large)
        for y in 240..<288 {
            for x in 64..<112 { pixels[y * Self.width + x] = 0 }
        }
        for y in 48..<176 {
            for x in 514..<518 { pixels[y * Self.width + x] = 250 }
        }
        let got = Self.unexplained(changes, pixels, budget: 100)
        #expect(got == [PixelRect(x: 224, y: 96, width: 128, height: 128)], "\(got)")
        let both = Self.unexplained(changes, pixels)
        #expect(both.count == 2 && both.contains { $0.contains(Point(80, 260)) }, "\(both)")
        #expect(!both.contains { $0.contains(Point(516, 100)) }, "the edge was read: \(both)")
        let darker = Self.frame(seed: 3).map { $0 &- 40 }
        #expect(Self.unexplained(changes, darker).isEmpty, "the whole frame changed")
    }
}
