import Foundation
import TestSupport
import Testing

@testable import Barscope

/// Whether bars go on past a read's ends (a part), and where the outline ends: at the read's own ends.
extension BarOutlineTests {
    /// A read on one line that must have crossed the whole code (I2/5): bars of 2-px modules (a fixed sequence of
    /// 1- to 3-module widths) over x 40...160 and y 30...70 on white; the hit line, y 50, has a faint patch (x
    /// 82...116, rows 49...51, at 200: 34 px of light) that the walk takes for a quiet zone.
    static func barsWithFaintPatch(grazing: Bool) -> [UInt8] {
        let (w, h) = (200, 100)
        var pixels = [UInt8](repeating: 230, count: w * h)
        let widths = [2, 1, 3, 1, 1, 2, 2, 1, 3, 2, 1, 1, 2, 3, 1, 2]
        var x = 40
        var k = 0
        var dark = true
        while x < 160 {
            let width = 2 * widths[k % widths.count]
            for xx in x..<min(160, x + width) where dark {
                // Grazing: the bars' lower ends rise from y 70 to 50 along the code, so that a line at y 52 leaves
                // them halfway (a tilted code's part).
                let bottom = grazing ? 70 - (xx - 40) / 5 : 70
                for y in 30..<bottom { pixels[y * w + xx] = 40 }
            }
            x += width
            dark.toggle()
            k += 1
        }
        if !grazing {
            for y in 49...51 {
                for xx in 82..<116 { pixels[y * w + xx] = 200 }
            }
        }
        return pixels
    }

    /// A read of the whole code, a faint patch on its line (a walk along that line stops there), is outlined on the
    /// bars and is no part; a read on a line that leaves the bars through their ends (at y 60 they end at x 90) is a
    /// part: the bars go on past its end, on the lines above it.
    @Test func aReadWhoseBarsGoOnIsAPartAndAFaintPatchIsNot() throws {
        try Self.barsWithFaintPatch(grazing: false).withUnsafeBytes { raw in
            let image = LumaImage(base: raw.baseAddress!, width: 200, height: 100, stride: 200)
            let whole = try #require(
                BarOutline.estimate(reads: [(Point(40, 50), Point(160, 50))], modules: 36, in: image))
            #expect(!whole.goesOnPast)
            for corner in [Point(40, 30), Point(40, 70), Point(160, 70), Point(160, 30)] {
                let nearest = whole.corners.map { $0.distance(to: corner) }.min() ?? .infinity
                #expect(nearest < 2, "corner \(corner): the outline's nearest is \(nearest) px away, \(whole.corners)")
            }
        }
        try Self.barsWithFaintPatch(grazing: true).withUnsafeBytes { raw in
            let image = LumaImage(base: raw.baseAddress!, width: 200, height: 100, stride: 200)
            let part = try #require(
                BarOutline.estimate(reads: [(Point(40, 60), Point(90, 60))], modules: 36, in: image))
            #expect(part.goesOnPast, "\(part.corners)")
        }
    }

    /// Another engine's read (zxing-cpp's polygon: its first scan line from the first corner to the last, its last
    /// between the middle two) is judged the same way: on the grazing bars a line at y 60 stops where the bars end
    /// (x 90) while the lines above go on, a part; on whole bars a line across them all is not.
    @Test func aReadWhoseLineStopsInsideTheCodeIsAPart() {
        func read(_ y: Double, _ x0: Double, _ x1: Double) -> Detection {
            Detection(
                type: "I2/5", data: "1234", quality: 1,
                polygon: [Point(x0, y), Point(x0, y), Point(x1, y), Point(x1, y)])
        }
        Self.barsWithFaintPatch(grazing: true).withUnsafeBytes { raw in
            let image = LumaImage(base: raw.baseAddress!, width: 200, height: 100, stride: 200)
            #expect(BarcodeReader.readsPart(read(60, 40, 90), in: image))
        }
        Self.barsWithFaintPatch(grazing: false).withUnsafeBytes { raw in
            let image = LumaImage(base: raw.baseAddress!, width: 200, height: 100, stride: 200)
            #expect(!BarcodeReader.readsPart(read(40, 40, 160), in: image))
        }
    }

    /// Bars that lean 50 degrees from the scan line's normal (tall, so that a row crosses them all): across the bars
    /// (not along the row) nothing follows the last bar, so a whole read is no part.
    @Test func leaningBarsAreNotTakenForACodeGoingOn() {
        let (w, h) = (240, 120)
        var pixels = [UInt8](repeating: 230, count: w * h)
        let widths = [2, 1, 3, 1, 1, 2, 2, 1, 3, 2, 1, 1, 2, 3, 1, 2, 1, 3]
        var bars: [(Double, Double)] = []
        var u = 80.0
        for (k, width) in widths.enumerated() {
            if k % 2 == 0 { bars.append((u, u + 2 * Double(width))) }
            u += 2 * Double(width)
        }
        let lean = tan(50 * Double.pi / 180)
        for y in 5..<115 {
            for x in 0..<w {
                let along = Double(x) - Double(y - 60) * lean
                if bars.contains(where: { along >= $0.0 && along < $0.1 }) { pixels[y * w + x] = 40 }
            }
        }
        let end = bars.last!.1
        pixels.withUnsafeBytes { raw in
            let image = LumaImage(base: raw.baseAddress!, width: w, height: h, stride: w)
            let whole = (Point(80, 60), Point(end - 1, 60))
            let outline = BarOutline.estimate(reads: [whole], modules: 30, in: image)
            #expect(outline.map { !$0.goesOnPast } == true, "\(String(describing: outline?.corners))")
        }
    }

    /// The outline ends at the read's last bar, not at bars past a short quiet zone (4 modules of space, then more
    /// bars, as a neighbour's or a label's print): those are where the code would go on, were it a part.
    @Test func theOutlineEndsWhereTheReadEnds() throws {
        let (w, h) = (200, 100)
        var pixels = [UInt8](repeating: 230, count: w * h)
        let widths = [2, 1, 3, 1, 1, 2, 2, 1, 3, 2, 1, 1, 2, 3, 1, 2, 1]
        var x = 30
        for (k, width) in widths.enumerated() {
            if k % 2 == 0 { for y in 30..<70 { for xx in x..<(x + 2 * width) { pixels[y * w + xx] = 40 } } }
            x += 2 * width
        }
        let end = x  // the last bar's trailing edge (the last width is a bar's)
        for bar in [end + 8, end + 14] { for y in 30..<70 { for xx in bar..<(bar + 3) { pixels[y * w + xx] = 40 } } }
        try pixels.withUnsafeBytes { raw in
            let image = LumaImage(base: raw.baseAddress!, width: w, height: h, stride: w)
            let outline = try #require(
                BarOutline.estimate(reads: [(Point(30, 50), Point(Double(end), 50))], modules: 30, in: image))
            let far = outline.corners.map(\.x).max()!
            #expect(abs(far - Double(end)) < 1, "the outline ends at x \(far), the read at \(end)")
            #expect(outline.goesOnPast)
        }
    }
}
