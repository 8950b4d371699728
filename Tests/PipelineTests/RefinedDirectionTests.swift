import Barscope
import Foundation
import TestSupport
import Testing

/// A 1D code's box when the direction across its bars is judged wrong: a level CODE-39 of 1.3 px modules (frame 30
/// of the small scene's seed 82 at 1080p, H.264-decoded, cut to 400x180 around the code) that ZBar reads on two
/// lines near its bars' top ends. Its profile search judged it 47 degrees off and the box came out 319 px long for a
/// code 163 px long; a box longer across its bars than the hits' lines ran is no scan line's read, so another
/// direction is taken.
@Suite(.suiteLimit) struct RefinedDirectionTests {
    static let frame = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Frames/code39-two-hits-near-top.png").path
    /// The code's outline in the cut (the generator's truth).
    static let truth = [Point(111, 76), Point(113, 111), Point(274, 106), Point(273, 70)]

    @Test func aBoxIsNeverLongerThanItsHitsRan() throws {
        // The video path's reader (no still-image second passes), ZBar alone.
        let found = try ImageScanner(engine: .zbar, thorough: false).scan(path: Self.frame)
        let d = try #require(found.first { $0.type == "CODE-39" && $0.data == "SRQ8F88" }, "\(found)")
        #expect(d.bounds.width <= 170 && d.bounds.height <= 60, "\(d.bounds), \(d.polygon)")
        // Every corner near the outline's: within 12 px (the box is square to the image, the code 2 degrees off).
        for c in d.polygon {
            let nearest = Self.truth.map { $0.distance(to: c) }.min() ?? .infinity
            #expect(nearest <= 12, "corner \(c) of \(d.polygon)")
        }
    }
}
