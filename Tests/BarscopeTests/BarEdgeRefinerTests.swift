import Foundation
import Testing

@testable import Barscope

/// The direction across a 1D code's bars, searched from its profile, when ZBar read the code on one scan line that
/// runs along its bars' ends (a made image: thin bars on a white label on a dark background, as the small scene's).
@Suite struct BarEdgeRefinerTests {
    /// A 200x120 grey image: background 40, label 30...170 x 30...90 at 220, bars of 1.5-px modules (widths 1 to 3
    /// modules, a fixed sequence) over x 50...150 and y 45...80 at 50, tilted by `degrees` about (100, 62);
    /// each pixel the mean of 4x4 samples.
    static func code(degrees: Double) -> [UInt8] {
        let module = 1.5
        var edges: [Double] = []  // bar starts and ends along the code
        var x = 50.0
        var dark = true
        var k = 0
        while x < 150 {
            let w = Double([1, 2, 1, 3, 1, 1, 2, 1, 3, 2, 1, 1][k % 12]) * module
            if dark { edges.append(x) } else { edges.append(x) }
            x += w
            dark.toggle()
            k += 1
        }
        edges.append(x)
        func isBar(_ u: Double) -> Bool {
            guard u >= 50, u < edges.last! else { return false }
            let i = edges.lastIndex { $0 <= u }!
            return i % 2 == 0
        }
        let a = degrees * .pi / 180
        var out = [UInt8](repeating: 0, count: 200 * 120)
        for py in 0..<120 {
            for px in 0..<200 {
                var sum = 0.0
                for sy in 0..<4 {
                    for sx in 0..<4 {
                        let x = Double(px) + (Double(sx) + 0.5) / 4 - 100
                        let y = Double(py) + (Double(sy) + 0.5) / 4 - 62
                        // The point in the code's own frame (the code turned by `degrees`).
                        let u = x * cos(a) + y * sin(a) + 100
                        let v = -x * sin(a) + y * cos(a) + 62
                        let onLabel = u >= 30 && u < 170 && v >= 30 && v < 90
                        let onBars = v >= 45 && v < 80 && isBar(u)
                        sum += onBars ? 50 : onLabel ? 220 : 40
                    }
                }
                out[py * 200 + px] = UInt8(sum / 16)
            }
        }
        return out
    }

    static func angle(_ u: Point) -> Double { atan2(u.y, u.x) * 180 / .pi }

    /// Hits that are one scan line's run along the bars' top ends: the search moves onto the bars and finds their
    /// direction within a degree (0.5 measured at 2 and -3 degrees, 0 level; over 100 px, under a pixel at the
    /// box's corners). Centred on the hits' line, half its lines ran over the label's margin and it chose 47 and -47
    /// degrees for the tilted codes: the small scene's boxes turned 45 degrees.
    @Test(arguments: [0.0, 2.0, -3.0])
    func aCodeReadAlongItsBarsEndsIsBoxedAcrossItsBars(degrees: Double) {
        let pixels = Self.code(degrees: degrees)
        pixels.withUnsafeBytes { raw in
            let image = LumaImage(base: raw.baseAddress!, width: 200, height: 120, stride: 200)
            // The line through the bars' top ends, where they start (y 45 in the code's frame), as a scan line
            // reads it: level, from the first bar to the last.
            let top = 62 - 17.0 / cos(degrees * .pi / 180)
            let hits = [Point(50, top), Point(150, top)]
            let moved = BarEdgeRefiner.onTheBars(
                Point(100, top), in: image, across: Point(1, 0), half: 50, reach: 10)
            #expect(moved.y > top + 5, "the search's centre stayed on the bars' ends: \(moved)")
            let found = BarEdgeRefiner.acrossBarsFromProfile(
                in: image, points: hits, initial: Point(1, 0), oneLine: true)
            #expect(abs(Self.angle(found) - degrees) < 1, "across the bars at \(Self.angle(found))°")
        }
    }

    /// Hits on a line through the bars' middle: the centre stays where it is.
    @Test func aCentreOnTheBarsStays() {
        let pixels = Self.code(degrees: 0)
        pixels.withUnsafeBytes { raw in
            let image = LumaImage(base: raw.baseAddress!, width: 200, height: 120, stride: 200)
            let moved = BarEdgeRefiner.onTheBars(Point(100, 62), in: image, across: Point(1, 0), half: 50, reach: 10)
            #expect(moved == Point(100, 62))
        }
    }
}
