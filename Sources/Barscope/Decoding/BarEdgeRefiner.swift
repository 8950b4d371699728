import Foundation

/// Snaps the ends of a 1D code's box to its outermost bars.
///
/// ZBar reports a linear code's location as points where scan lines finished decoding, which can sit a module or
/// two inside the first or last bar (6 px on CODE-128 at 3 px modules). Along a few lines across the bars, this
/// finds the outermost dark pixel near each end, within a window well short of the quiet zone, and moves the box
/// ends there.
enum BarEdgeRefiner {
    /// - Parameters:
    ///   - corners: the box in image coordinates, TL, BL, BR, TR order as `OrientedBox` gives it.
    ///   - across: the unit direction across the bars (the bars follow one another along it).
    /// What the refiner found: the box, its length across the bars, and whether the code ran out of the image
    /// before a quiet zone was seen at one of its ends (a code cut by the image's or the crop's edge).
    struct Refined {
        var corners: [Point]
        var length: Double
        var runsOffImage: Bool
    }

    /// The code's outline as a quadrilateral fitted to its bars, from a first box around it (`corners`) and the
    /// direction across its bars. Three estimates, each from the image:
    /// 1. where the bars begin and end across them on three lines of the first box (its ends, roughly);
    /// 2. where the bars end along them, in up to four windows across the code: each line outward from the
    ///    strongest is still on the bars while it carries the bars' own pattern, measured as its covariance with
    ///    the line before it over that line's spread (a line past the bars, on a label's margin, printed digits or
    ///    a busy background, has a spread of its own but none of the bars'); the end is where that falls to half
    ///    the strongest line's spread. A line fitted through each side's window ends gives the top and bottom
    ///    edges, sloped as perspective or a wrong direction leaves them;
    /// 3. the first and last bar's edge on seven lines spread over the bars' height: a line fitted through each
    ///    side's gives the start and end edges, leaning as the bars lean.
    /// The four lines' intersections are the corners (a perspective view's quadrilateral, not forced to a
    /// rectangle). Every window and tolerance scales with the code's length and the bars' measured widths.
    /// Where the end edges found lean more than a degree from square to the direction given (a direction judged
    /// from a busy neighbourhood), the fit is made once more across the bars as they lean: its lines then run
    /// square to the bars, as the windows' and lines' estimates assume.
    static func refine(_ corners: [Point], in image: LumaImage, across uDir: Point, again: Bool = true) -> Refined {
        // Unrefined, the box's own extent across the bars stands.
        let us = corners.map { $0.x * uDir.x + $0.y * uDir.y }
        let unrefined = Refined(corners: corners, length: (us.max() ?? 0) - (us.min() ?? 0), runsOffImage: false)
        guard corners.count == 4 else { return unrefined }
        // Name the box by its two axes: u runs across the bars (bar sequence), v along them.
        // Corners are c0..c3 in order around the box; pick the edge pair whose direction best matches u.
        let e01 = corners[1] - corners[0]
        let e03 = corners[3] - corners[0]
        func alignment(_ e: Point) -> Double {
            let len = (e.x * e.x + e.y * e.y).squareRoot()
            return len == 0 ? 0 : abs(e.x * uDir.x + e.y * uDir.y) / len
        }
        // origin + s*u + r*v spans the box, s, r in 0...1.
        let (u, v) = alignment(e03) >= alignment(e01) ? (e03, e01) : (e01, e03)
        let origin = corners[0]
        let length = (u.x * u.x + u.y * u.y).squareRoot()
        guard length >= 8 else { return unrefined }
        let unit = Point(u.x / length, u.y / length)
        let height = (v.x * v.x + v.y * v.y).squareRoot()
        // Along the bars, in pixels: the box's own v when it has height, else square to the bars (a box of one
        // scan line's hits has none).
        let vUnit = height >= 1 ? Point(v.x / height, v.y / height) : Point(-unit.y, unit.x)
        let mid = Point(origin.x + v.x / 2, origin.y + v.y / 2)
        func at(_ s: Double, _ r: Double) -> Point {
            Point(mid.x + unit.x * s + vUnit.x * r, mid.y + unit.y * s + vUnit.y * r)
        }

        // 1. The ends across the bars on three lines of the first box.
        var starts: [Double] = []
        var ends: [Double] = []
        var linesOffImage = 0
        for r in [-0.25, 0, 0.25] {
            guard let e = lineEnds(in: image, at: r * height, near: 0, length, mid: mid, unit: unit, vUnit: vUnit)
            else { continue }
            if e.offImage { linesOffImage += 1 }
            starts.append(e.first)
            ends.append(e.last)
        }
        guard !starts.isEmpty else { return unrefined }
        let s0 = median(starts)
        let s1 = median(ends)
        let runsOffImage = 2 * linesOffImage > starts.count

        // 2. The bars' ends along them, window by window across the code.
        // A bar is never longer than the code is wide, nor than twice the reported box is tall.
        let limit = Int(max(2 * height, s1 - s0))
        let windows = max(1, min(4, Int((s1 - s0) / 24)))
        var tops: [Point] = []
        var bottoms: [Point] = []
        // Every window starts on the line strongest over the whole code, looked for in the middle half of the first
        // box: its outer lines are the outermost scan lines' hits, where the bars may end (a line there straddling
        // a label's edge in perspective has the most spread of all, and none of it the bars').
        let strongest = barEnds(
            in: image, mid: mid, unit: unit, vUnit: vUnit, from: s0, to: s1, within: height / 4, limit: limit,
            strongestOnly: true
        ).strongest
        for w in 0..<windows {
            let a = s0 + (s1 - s0) * Double(w) / Double(windows)
            let b = s0 + (s1 - s0) * Double(w + 1) / Double(windows)
            let (top, bottom, _) = barEnds(
                in: image, mid: mid, unit: unit, vUnit: vUnit, from: a, to: b, within: height / 2, limit: limit,
                start: strongest)
            guard top != 0 || bottom != 0 else { continue }
            tops.append(Point((a + b) / 2, top))
            bottoms.append(Point((a + b) / 2, bottom))
        }
        // r = a + b s through the windows' ends (level when there is one window, or none).
        let fallback = (-height / 2, height / 2)
        let topLine = fitLine(tops) ?? (tops.isEmpty ? fallback.0 : median(tops.map(\.y)), 0)
        let bottomLine = fitLine(bottoms) ?? (bottoms.isEmpty ? fallback.1 : median(bottoms.map(\.y)), 0)
        func top(_ s: Double) -> Double { topLine.0 + topLine.1 * s }
        func bottom(_ s: Double) -> Double { bottomLine.0 + bottomLine.1 * s }

        // 3. The first and last bar's edges on seven lines over the bars' middle three fifths: s = c + d r at each
        // end.
        var startEdge: [Point] = []
        var endEdge: [Point] = []
        for f in [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8] {
            let rStart = top(s0) + f * (bottom(s0) - top(s0))
            let rEnd = top(s1) + f * (bottom(s1) - top(s1))
            let rMid = (rStart + rEnd) / 2
            guard let e = lineEnds(in: image, at: rMid, near: s0, s1 - s0, mid: mid, unit: unit, vUnit: vUnit)
            else { continue }
            // The line is parallel to u at rMid; where it meets each edge, r is rMid.
            startEdge.append(Point(rMid, e.first))
            endEdge.append(Point(rMid, e.last))
        }
        let startLine = fitLine(startEdge) ?? (s0, 0)
        let endLine = fitLine(endEdge) ?? (s1, 0)
        // Where an end edge (s = c + d r) meets a side (r = a + b s).
        func corner(_ end: (Double, Double), _ side: (Double, Double)) -> Point {
            let denominator = 1 - end.1 * side.1
            let s = abs(denominator) < 1e-6 ? end.0 : (end.0 + end.1 * side.0) / denominator
            return at(s, side.0 + side.1 * s)
        }
        let quad = [
            corner(startLine, topLine), corner(startLine, bottomLine), corner(endLine, bottomLine),
            corner(endLine, topLine),
        ]
        // A fit gone wild (a degenerate line through two points) keeps the first estimate's box.
        let box = [at(s0, top(s0)), at(s0, bottom(s0)), at(s1, bottom(s1)), at(s1, top(s1))]
        let sane = zip(quad, box).allSatisfy { $0.distance(to: $1) <= 0.25 * (s1 - s0) + 4 }
        let rMid = (top((s0 + s1) / 2) + bottom((s0 + s1) / 2)) / 2
        let (sStart, sEnd) = sane ? (startLine.0 + startLine.1 * rMid, endLine.0 + endLine.1 * rMid) : (s0, s1)
        let fitted = Refined(
            corners: OrientedBox.normalizedOrder(sane ? quad : box), length: sEnd - sStart, runsOffImage: runsOffImage)
        // The bars lean by atan(d) from vUnit (s = c + d r along each end edge).
        let lean = atan((startLine.1 + endLine.1) / 2)
        guard again, startEdge.count >= 3, endEdge.count >= 3, abs(lean) > Double.pi / 180, abs(lean) < Double.pi / 6
        else { return fitted }
        // The bars run along vUnit + d unit: square to them is unit - d vUnit (both turned by the lean).
        let (c, sn) = (cos(lean), sin(lean))
        let turned = Point(unit.x * c - vUnit.x * sn, unit.y * c - vUnit.y * sn)
        let along = Point(vUnit.x * c + unit.x * sn, vUnit.y * c + unit.y * sn)
        let r0 = top((s0 + s1) / 2)
        let r1 = bottom((s0 + s1) / 2)
        let centre = at((s0 + s1) / 2, (r0 + r1) / 2)
        let half = (s1 - s0) / 2
        let turnedBox = [
            (-half, r0 - (r0 + r1) / 2), (-half, r1 - (r0 + r1) / 2), (half, r1 - (r0 + r1) / 2),
            (half, r0 - (r0 + r1) / 2),
        ].map { (s, r) in
            Point(centre.x + turned.x * s + along.x * r, centre.y + turned.y * s + along.y * r)
        }
        let again = refine(turnedBox, in: image, across: turned, again: false)
        // Turning the lines by a lean under 30 degrees changes the outline's length and area by a fraction: a re-fit
        // that makes it half as large again, or two thirds smaller, has found something other than these bars (its
        // windows' walk led off them into a busy background: a 25-px strip of bars boxed 800 px high; or stopped
        // on a strip of them: a 300-px-wide code boxed 35 px wide), and the first fit stands.
        func area(_ q: [Point]) -> Double {
            abs(
                q.indices.reduce(0.0) { sum, i in
                    sum + q[i].x * q[(i + 1) % q.count].y - q[(i + 1) % q.count].x * q[i].y
                }) / 2
        }
        // Neither more than half as large again as the other, give or take `slack`.
        func alike(_ a: Double, _ b: Double, slack: Double) -> Bool { a <= 1.5 * b + slack && b <= 1.5 * a + slack }
        let agrees =
            alike(again.length, fitted.length, slack: 4)
            && alike(area(again.corners), area(fitted.corners), slack: 4 * fitted.length)
        return agrees ? again : fitted
    }

    /// The line `y = a + b x` through the points by Theil and Sen's estimate: the median of the slopes between
    /// every two points, the median intercept at that slope. A third of the points may lie anywhere (a line that
    /// met a label's edge, a window on a neighbour's bars) without moving it. Nil for fewer than two points or
    /// points with no spread in x.
    static func fitLine(_ points: [Point]) -> (Double, Double)? {
        var slopes: [Double] = []
        for i in points.indices {
            for j in points.indices where j > i && abs(points[j].x - points[i].x) > 1e-9 {
                slopes.append((points[j].y - points[i].y) / (points[j].x - points[i].x))
            }
        }
        guard !slopes.isEmpty else { return nil }
        let b = median(slopes)
        return (median(points.map { $0.y - b * $0.x }), b)
    }
}
