import Foundation
import TestSupport
import Testing

@testable import Barscope

/// A read's own ends against the bars': a faint patch or a part, leaning bars, and a box cut where the decoder ended.
extension BarEdgeRefinerTests {
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

    /// The walk stopped at a faint patch inside the code, short of the line beside it: the read's own ends (what
    /// ZBar's decoder finds on the hit's line, given here as the bars' true ends) reach as far as that line, and
    /// the read is kept, boxed on them; without them it is dropped. A line that leaves the bars through their ends
    /// reads a part: its own ends stop where the line leaves the bars, and the line beside it goes on past.
    @Test func theReadsOwnEndsTellAFaintPatchFromAPart() {
        let faint = Self.barsWithFaintPatch(grazing: false)
        faint.withUnsafeBytes { raw in
            let image = LumaImage(base: raw.baseAddress!, width: 200, height: 100, stride: 200)
            let span = BarEdgeRefiner.singleLineSpan(hit: Point(60, 50), scan: Point(1, 0), whole: true, in: image) {
                (Point(40, 50), Point(160, 50))
            }
            #expect(span != nil)
            if let ends = span?.ends.map(\.x).sorted() {
                #expect(abs(ends[0] - 40) <= 2 && abs(ends[1] - 160) <= 2, "\(ends)")
            }
            let unknown = BarEdgeRefiner.singleLineSpan(hit: Point(60, 50), scan: Point(1, 0), whole: true, in: image)
            #expect(unknown == nil)
        }
        let grazing = Self.barsWithFaintPatch(grazing: true)
        grazing.withUnsafeBytes { raw in
            let image = LumaImage(base: raw.baseAddress!, width: 200, height: 100, stride: 200)
            // At y 60 the bars end at x 90: the line beside it 4 px up runs to x 110.
            let span = BarEdgeRefiner.singleLineSpan(hit: Point(60, 60), scan: Point(1, 0), whole: true, in: image) {
                (Point(40, 60), Point(90, 60))
            }
            #expect(span == nil, "\(String(describing: span))")
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

    /// Bars that lean 50 degrees from the scan line's normal (tall, so that a row crosses them all): the rows 2 and
    /// 4 px beside a whole read cross them 2.4 and 4.8 px further along, the bars' lean, not the code going on.
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
            #expect(!BarEdgeRefiner.continuesPast(whole, along: Point(1, 0), in: image))
        }
    }

    /// A box that ran on past the read's last bar (over a short quiet zone onto other bars) ends where ZBar's decoder
    /// ended the read on its line, its sides kept; an end within a module of the read's, or short of it, stays.
    @Test func aBoxIsCutWhereTheDecoderEndedTheRead() {
        // A code tilted about 5 degrees, its box running 140 px on past its last bar at x = 940.
        let box = [Point(450, 490), Point(462, 630), Point(1080, 572), Point(1068, 428)]
        let across = Point(cos(-5 * Double.pi / 180), sin(-5 * Double.pi / 180))
        let ends = (Point(452, 560), Point(940, 517))
        let cut = BarEdgeRefiner.trimmed(box, to: ends, across: across, slack: 5)
        func t(_ p: Point) -> Double { p.x * across.x + p.y * across.y }
        #expect(abs(t(cut[2]) - t(ends.1)) < 0.5 && abs(t(cut[3]) - t(ends.1)) < 0.5, "\(cut)")
        #expect(cut[0] == box[0] && cut[1] == box[1])
        // The cut corners stay on the box's long sides.
        for (far, near) in [(2, 1), (3, 0)] {
            let side = (box[far].x - box[near].x, box[far].y - box[near].y)
            let moved = (cut[far].x - box[near].x, cut[far].y - box[near].y)
            #expect(abs(side.0 * moved.1 - side.1 * moved.0) < 1e-6)
        }
        // A box within the read's ends is left as it is.
        #expect(BarEdgeRefiner.trimmed(box, to: (Point(440, 560), Point(1090, 500)), across: across, slack: 5) == box)
    }
}
