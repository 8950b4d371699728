import Foundation
import TestSupport
import Testing

@testable import Barscope

/// A 1D code's outline from its read's lines and the image (made images: thin bars on a white label on a dark
/// background, as the small scene's; a code in perspective; an EAN-13 whose halves were read apart).
@Suite(.suiteLimit) struct BarOutlineTests {
    /// A 200x120 grey image: background 40, label 30...170 x 30...90 at 220, bars of 1.5-px modules (widths 1 to 3
    /// modules, a fixed sequence) over x 50...150 and y 45...80 at 50, tilted by `degrees` about (100, 62);
    /// each pixel the mean of 4x4 samples.
    static func code(degrees: Double) -> [UInt8] {
        let edges = Self.edges  // bar starts and ends along the code
        func isBar(_ u: Double) -> Bool {
            guard u >= 50, u < edges.last! else { return false }
            let i = edges.lastIndex { $0 <= u }!
            return i % 2 == 0
        }
        let a = degrees * .pi / 180
        // The point in the code's own frame (the code turned by `degrees`).
        return render(toCode: { x, y in (x * cos(a) + y * sin(a), -x * sin(a) + y * cos(a)) }) { u, v in
            let onLabel = u >= 30 && u < 170 && v >= 30 && v < 90
            let onBars = v >= 45 && v < 80 && isBar(u)
            return onBars ? 50 : onLabel ? 220 : 40
        }
    }

    /// A 200x120 image of `value` in code space, each pixel the mean of 4x4 samples; `toCode` takes a point's
    /// offset from (100, 62) in the image to its offset from (100, 62) in code space.
    static func render(
        toCode: (Double, Double) -> (Double, Double), _ value: (Double, Double) -> Double
    ) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 200 * 120)
        for py in 0..<120 {
            for px in 0..<200 {
                var sum = 0.0
                for sy in 0..<4 {
                    for sx in 0..<4 {
                        let (u, v) = toCode(
                            Double(px) + (Double(sx) + 0.5) / 4 - 100, Double(py) + (Double(sy) + 0.5) / 4 - 62)
                        sum += value(u + 100, v + 62)
                    }
                }
                out[py * 200 + px] = UInt8(sum / 16)
            }
        }
        return out
    }

    /// Where each bar and space begins along the code (even places: bars), and where the last one ends: widths of 1
    /// to 3 modules of 1.5 px, a fixed sequence, from u = 50 to past 150.
    static let edges: [Double] = {
        var out: [Double] = []
        var u = 50.0
        var k = 0
        while u < 150 {
            out.append(u)
            u += Double([1, 2, 1, 3, 1, 1, 2, 1, 3, 2, 1, 1][k % 12]) * 1.5
            k += 1
        }
        // The last run begun is a bar: the code ends on a bar's trailing edge.
        if out.count % 2 == 0 { out.removeLast() } else { out.append(u) }
        return out
    }()

    /// The bars' outline (first bar's leading edge to last bar's trailing edge, the bars' full height) in the image.
    static func outline(degrees: Double) -> [Point] {
        let a = degrees * .pi / 180
        func image(_ u: Double, _ v: Double) -> Point {
            let (x, y) = (u - 100, v - 62)
            return Point(x * cos(a) - y * sin(a) + 100, x * sin(a) + y * cos(a) + 62)
        }
        let (u0, u1) = (edges.first!, edges.last!)
        return [image(u0, 45), image(u0, 80), image(u1, 80), image(u1, 45)]
    }

    static func angle(_ u: Point) -> Double { atan2(u.y, u.x) * 180 / .pi }

    /// A read on one line along the bars' top ends (where a level row crosses a tilted code's first bars and leaves
    /// by their ends): the direction across the bars is judged within 1.5 degrees (half its structure tensor's area
    /// is the label's blank margin; 1.0 measured at 2 degrees), and the outline has every corner
    /// within 3 px of the bars' (the bars run on 35 px below the read's line, which the walk along them finds).
    @Test(arguments: [0.0, 2.0, -3.0])
    func aCodeReadAlongItsBarsEndsIsOutlinedOnItsBars(degrees: Double) throws {
        let pixels = Self.code(degrees: degrees)
        try pixels.withUnsafeBytes { raw in
            let image = LumaImage(base: raw.baseAddress!, width: 200, height: 120, stride: 200)
            // The line through the bars' top ends, where they start (y 45 in the code's frame), as a scan line
            // reads it: level, from the first bar to the last.
            let top = 62 - 17.0 / cos(degrees * .pi / 180)
            let outline = try #require(
                BarOutline.estimate(reads: [(Point(50, top), Point(150, top))], modules: 60, in: image))
            #expect(
                abs(Self.angle(outline.across) - degrees) < 1.5, "across the bars at \(Self.angle(outline.across))°")
            for corner in Self.outline(degrees: degrees) {
                let nearest = outline.corners.map { $0.distance(to: corner) }.min() ?? .infinity
                #expect(
                    nearest < 3,
                    "corner \(corner) of the bars: the outline's nearest is \(nearest) px away, \(outline.corners)")
            }
            #expect(!outline.goesOnPast)
        }
    }

    /// Bars cut by the image's edge (a rescan's region that ends inside the code) end at the edge: the lines past
    /// it are not judged. Sampled with the edge row repeated, they ran on to the refiner's limit, 168 px past the
    /// bars in a fast clip's rescans.
    @Test func barsCutByTheImageEdgeEndThere() {
        let pixels = Self.code(degrees: 0)
        // The image's rows from y 55 on: the bars (45...80) run off its top.
        let cut = Array(pixels[(55 * 200)...])
        cut.withUnsafeBytes { raw in
            let image = LumaImage(base: raw.baseAddress!, width: 200, height: 65, stride: 200)
            let (top, bottom, _) = BarOutline.barEnds(
                in: image, mid: Point(50, 7), unit: Point(1, 0), vUnit: Point(0, 1), from: 0, to: 100, within: 5,
                limit: 200)
            #expect(top >= -7.5 && top < -6, "the bars' top at \(top) (the image's edge is at -7)")
            #expect(abs(bottom - 18) < 1.5, "the bars' bottom at \(bottom), not 18")
        }
    }

    /// An EAN-13 of 1.4 to 1.5-px modules, tilted 11 degrees, of which ZBar's hits cover only 51 modules (its
    /// halves come from different lines): the refiner walks out to the code's right end. Its 4-module spaces
    /// measure 6 px and its thin bars 1 px, so a quiet zone of 6 of the thinnest bars stopped the walk inside the
    /// code, 49 to 53 px short (as the small scene's EAN-13 boxes that ended 60 modules in: 20 of one clip's 90
    /// frames, after H.264 at 1.4 px).
    @Test(arguments: [(1.4, 0.7), (1.5, 0.0)])
    func aCodesWideSpacesAreNotTakenForItsQuietZone(module: Double, offset: Double) throws {
        let symbol = try EAN13.symbol("7648003861711")
        let bars = symbol.modules[0]
        let (u0, v0, v1) = (40 + offset, 45.0, 80.0)  // the bars' start along the code and their top and bottom
        let u1 = u0 + Double(bars.count) * module
        let a = -11 * Double.pi / 180
        let (w, h) = (240, 150)
        let (cx, cy) = (120.0, 75.0)
        // The code's frame (u across the bars, v along them) to the image's, turned by `a` about (cx, cy).
        func place(_ u: Double, _ v: Double) -> Point {
            let (x, y) = (u - cx, v - 62)
            return Point(x * cos(a) - y * sin(a) + cx, x * sin(a) + y * cos(a) + cy)
        }
        var pixels = [UInt8](repeating: 0, count: w * h)
        for py in 0..<h {
            for px in 0..<w {
                var sum = 0.0
                for sy in 0..<4 {
                    for sx in 0..<4 {
                        let x = Double(px) + (Double(sx) + 0.5) / 4 - cx
                        let y = Double(py) + (Double(sy) + 0.5) / 4 - cy
                        let u = x * cos(a) + y * sin(a) + cx
                        let v = -x * sin(a) + y * cos(a) + 62
                        let m = Int(((u - u0) / module).rounded(.down))
                        let onBars = v >= v0 && v < v1 && m >= 0 && m < bars.count && bars[m]
                        let onLabel = u >= u0 - 15 && u < u1 + 12 && v >= 35 && v < 95
                        sum += onBars ? 70 : onLabel ? 185 : 40
                    }
                }
                pixels[py * w + px] = UInt8(sum / 16)
            }
        }
        try pixels.withUnsafeBytes { raw in
            let image = LumaImage(base: raw.baseAddress!, width: w, height: h, stride: w)
            // Where ZBar's hits say the code is (its halves joined from different lines: 51 of its 95 modules).
            let seen = (place(u0, 60), place(u0 + 51 * module, 60))
            let box = try #require(BarOutline.estimate(reads: [seen], exact: false, modules: 95, in: image))
            for corner in [place(u0, v0), place(u0, v1), place(u1, v1), place(u1, v0)] {
                let nearest = box.corners.map { $0.distance(to: corner) }.min() ?? .infinity
                #expect(
                    nearest < 3, "corner \(corner) of the bars: the box's nearest is \(nearest) px away, \(box.corners)"
                )
            }
        }
    }

    /// The fixed-point line sampler gives `bilinear`'s samples, to a quarter of a level (positions to 1/65536 px,
    /// the steps' rounding adding up over 80 samples), on lines at every angle across a code; a line that ends off
    /// the image is left to `bilinear`.
    @Test func theLineSamplerIsBilinears() throws {
        let pixels = Self.code(degrees: 7)
        try pixels.withUnsafeBytes { raw in
            let image = LumaImage(base: raw.baseAddress!, width: 200, height: 120, stride: 200)
            for degrees in stride(from: 0.0, to: 360, by: 13) {
                let step = Point(cos(degrees * .pi / 180), sin(degrees * .pi / 180))
                let start = Point(100.3 - 40 * step.x, 61.7 - 40 * step.y)
                for every in [1, 3] {
                    let count = 80 / every + 1
                    let fast = try #require(
                        BarOutline.lineSamples(image, from: start, step: step, count: count, every: every))
                    let samples = (0..<count).map { k in
                        BarOutline.bilinear(
                            image, start.x + step.x * Double(k * every), start.y + step.y * Double(k * every))
                    }
                    #expect(samples.max()! - samples.min()! > 60, "the line at \(degrees)° crosses no bars")
                    let worst = zip(fast, samples).map { abs($0 - $1) }.max() ?? .infinity
                    #expect(worst < 0.25, "at \(degrees)°, every \(every): \(worst) off")
                }
            }
            #expect(
                BarOutline.lineSamples(image, from: Point(150, 60), step: Point(1, 0), count: 60, every: 1) == nil)
        }
        // A line that ends a hair inside the image's last half pixel, where rounded steps carry the fixed point
        // past it, on a ramp (8 levels a pixel across, 2 down): still bilinear's samples to the last.
        let (w, h) = (24, 20)
        let ramp = (0..<(w * h)).map { UInt8(8 * ($0 % w) + 2 * ($0 / w)) }
        try ramp.withUnsafeBytes { raw in
            let image = LumaImage(base: raw.baseAddress!, width: w, height: h, stride: w)
            for end in [Point(Double(w) - 0.5 - 1e-9, 9.3), Point(11.7, Double(h) - 0.5 - 1e-9)] {
                let step = end.x > 20 ? Point(1, 0) : Point(0, 1)
                let count = 17
                let start = Point(end.x - step.x * Double(count - 1), end.y - step.y * Double(count - 1))
                let fast = try #require(
                    BarOutline.lineSamples(image, from: start, step: step, count: count, every: 1))
                let samples = (0..<count).map { k in
                    BarOutline.bilinear(image, start.x + step.x * Double(k), start.y + step.y * Double(k))
                }
                let worst = zip(fast, samples).map { abs($0 - $1) }.max() ?? .infinity
                #expect(worst < 0.25, "to the image's edge at \(end): \(worst) off")
            }
        }
    }

    /// A code seen in perspective: its bars' top and bottom tilt 1.5 degrees while the bars lean 3 degrees the
    /// other way (a quadrilateral, not a rectangle); printed digits of high contrast begin a pixel under the bars,
    /// and past a margin of 3 px above them the background is stripes along the bars, darker and lighter than
    /// the code's own. The outline is fitted to the bars alone: every corner within 1.5 px of theirs (the old
    /// contrast walk ran through the digits and the stripes, and an axis-square box missed the tilt by 5 px).
    @Test func aCodeInPerspectiveIsOutlinedOnItsBarsAlone() throws {
        let (alpha, beta) = (1.5 * Double.pi / 180, -3 * Double.pi / 180)
        // Code space (u, v) to the image: u's axis turned by alpha, v's by beta (a shear), about (100, 62).
        func image(_ u: Double, _ v: Double) -> Point {
            let (a, b) = (u - 100, v - 62)
            return Point(a * cos(alpha) - b * sin(beta) + 100, a * sin(alpha) + b * cos(beta) + 62)
        }
        let det = cos(alpha) * cos(beta) + sin(beta) * sin(alpha)
        let edges = Self.edges
        func value(_ u: Double, _ v: Double) -> Double {
            let onBars = v >= 45 && v < 80 && u >= 50 && u < edges.last! && edges.lastIndex { $0 <= u }! % 2 == 0
            if onBars { return 50 }
            if v >= 81 && v < 88 && u >= 50 && u < 150 { return Int(u / 1.7) % 3 == 0 ? 30 : 210 }  // digits
            if u >= 30 && u < 170 && v >= 42 && v < 92 { return 220 }  // the label
            return Int(u / 2.5) % 2 == 0 ? 15 : 240  // stripes along the bars
        }
        // The inverse of `image`.
        let pixels = Self.render(
            toCode: { x, y in ((x * cos(beta) + y * sin(beta)) / det, (-x * sin(alpha) + y * cos(alpha)) / det) },
            value)
        let truth = [image(edges.first!, 45), image(edges.first!, 80), image(edges.last!, 80), image(edges.last!, 45)]
        try pixels.withUnsafeBytes { raw in
            let luma = LumaImage(base: raw.baseAddress!, width: 200, height: 120, stride: 200)
            // The decoder's two lines through the bars' middle, each from the first bar's edge to the last's.
            let reads = [58.0, 66.0].map { v in (image(edges.first!, v), image(edges.last!, v)) }
            let box = try #require(BarOutline.estimate(reads: reads, modules: 60, in: luma))
            for corner in truth {
                let nearest = box.corners.map { $0.distance(to: corner) }.min() ?? .infinity
                #expect(nearest < 1.5, "corner \(corner): the box's nearest is \(nearest) px away, \(box.corners)")
            }
        }
    }
}
