import Foundation

/// Snaps the ends of a 1D code's box to its outermost bars.
///
/// ZBar reports a linear code's location as points where scan lines finished decoding, which can sit a module or
/// two inside the first or last bar (6 px on CODE-128 at 3 px modules). Along a few lines across the bars, this
/// finds the outermost dark pixel near each end, within a window well short of the quiet zone, and moves the box
/// ends there.
enum BarEdgeRefiner {
    /// The unit direction across a 1D code's bars (the way they follow one another), from the image's dominant
    /// edge direction over `area` (the structure tensor of the luma gradient); nil when the edges there have no
    /// clear direction. The area is grown by a twentieth of its length only: ZBar's hits lie on the bars, and
    /// whatever is further out (printed text, a neighbour's bars, a busy background) can have more edges than a
    /// faint code.
    static func acrossBars(in image: LumaImage, around area: PixelRect) -> Point? {
        let grow = max(area.width, area.height) / 20 + 2
        let r = area.expanded(by: grow)
        let x0 = max(1, r.x)
        let y0 = max(1, r.y)
        let x1 = min(image.width - 1, r.maxX)
        let y1 = min(image.height - 1, r.maxY)
        guard x1 - x0 >= 8, y1 - y0 >= 3 else { return nil }
        let src = image.base.assumingMemoryBound(to: UInt8.self)
        // Integer sums (a gradient squared is under 2^17, a frame's worth of them far under 2^63): the same
        // result as floating point at a third of the instructions.
        var sxx = 0
        var syy = 0
        var sxy = 0
        // Every other pixel both ways: a quarter of the work, the same direction. (Sparser grids alias with the
        // bars' period and tilt the estimate: measured, 28 px off on a code at -40 degrees.)
        for y in stride(from: y0, to: y1, by: 2) {
            let row = src + y * image.stride
            let above = row - image.stride
            let below = row + image.stride
            for x in stride(from: x0, to: x1, by: 2) {
                let gx = Int(row[x + 1]) &- Int(row[x - 1])
                let gy = Int(below[x]) &- Int(above[x])
                sxx &+= gx &* gx
                syy &+= gy &* gy
                sxy &+= gx &* gy
            }
        }
        let jxx = Double(sxx)
        let jyy = Double(syy)
        let jxy = Double(sxy)
        let trace = jxx + jyy
        guard trace > 0 else { return nil }
        // Coherence: how much one direction dominates (1 for parallel bars, 0 for texture without direction).
        let coherence = ((jxx - jyy) * (jxx - jyy) + 4 * jxy * jxy).squareRoot() / trace
        guard coherence > 0.5 else { return nil }
        let angle = 0.5 * atan2(2 * jxy, jxx - jyy)
        return Point(cos(angle), sin(angle))
    }

    /// The direction across the bars, judged from the bars themselves: through the middle of the hits (`points`),
    /// the profile across the bars is averaged over 21 lines along them, and the angle whose averaged profile keeps
    /// the largest share of the lines' own variance is the one the bars run at (a wrong angle smears them into one
    /// another; the share, not the variance itself, so that a card's edge or a neighbour's bars met at a steep
    /// angle do not win). Searched within 45 degrees of `initial` (the way ZBar's scan line ran: it reads no code
    /// at a steeper angle) by 3 degrees, then by 0.75 and 0.25. The structure tensor (`acrossBars`) misjudges bars of 1
    /// to 1.5 px: its central differences hardly see a period of 2 or 3 px, and the card's own edges win
    /// (measured: 10-degree codes boxed square to the image, a level one boxed at 22 degrees). `initial` when
    /// there are no bars to judge.
    static func acrossBarsFromProfile(in image: LumaImage, points: [Point], initial: Point, oneLine: Bool = false)
        -> Point
    {
        guard points.count >= 2 else { return initial }
        var c = Point(
            points.map(\.x).reduce(0, +) / Double(points.count), points.map(\.y).reduce(0, +) / Double(points.count))
        let along = points.map { ($0.x - c.x) * initial.x + ($0.y - c.y) * initial.y }
        let half = ((along.max() ?? 0) - (along.min() ?? 0)) / 2
        guard half >= 8 else { return initial }
        let base = atan2(initial.y, initial.x)
        let steps = Int(2 * half)
        let reach = 10
        if oneLine { c = onTheBars(c, in: image, across: initial, half: half, reach: reach) }
        // The share of the lines' own variance that their average keeps: 1 where all 13 run along the bars.
        func score(_ angle: Double) -> Double {
            let u = Point(cos(angle), sin(angle))
            let v = Point(-u.y, u.x)
            var sum = 0.0
            var squares = 0.0
            var lineSums = [Double](repeating: 0, count: 2 * reach + 1)
            var lineSquares = [Double](repeating: 0, count: 2 * reach + 1)
            for k in 0...steps {
                let t = -half + Double(k)
                var mean = 0.0
                for d in -reach...reach {
                    let x = bilinear(image, c.x + u.x * t + v.x * Double(d), c.y + u.y * t + v.y * Double(d))
                    mean += x
                    lineSums[d + reach] += x
                    lineSquares[d + reach] += x * x
                }
                mean /= Double(2 * reach + 1)
                sum += mean
                squares += mean * mean
            }
            let n = Double(steps + 1)
            let lines =
                zip(lineSums, lineSquares).map { $1 / n - ($0 / n) * ($0 / n) }.reduce(0, +) / Double(2 * reach + 1)
            guard lines > 0 else { return 0 }
            return (squares / n - (sum / n) * (sum / n)) / lines
        }
        let degree = Double.pi / 180
        var best = base
        var bestScore = -1.0
        // 3 degrees apart, then 0.75 around the best, then 0.25: a wrong angle's smear grows smoothly, so the
        // best of each pass is within a step of the best of the next.
        for k in -15...15 {
            let a = base + Double(k) * 3 * degree
            let sc = score(a)
            if sc > bestScore { (best, bestScore) = (a, sc) }
        }
        for step in [0.75, 0.25] {
            let centre = best
            for k in [-2, -1, 1, 2] {
                let a = centre + Double(k) * step * degree
                let sc = score(a)
                if sc > bestScore { (best, bestScore) = (a, sc) }
            }
        }
        guard bestScore > 0 else { return initial }
        var u = Point(cos(best), sin(best))
        // The same way round as `initial`.
        if u.x * initial.x + u.y * initial.y < 0 { u = Point(-u.x, -u.y) }
        return u
    }

    /// The centre for the profile search moved along the bars, by up to `reach`, so that its `2 reach + 1` lines lie
    /// on them, for hits that are the two ends of one scan line's run: that line can run along the bars' ends
    /// (measured: an I2/5 read once on the line through its bars' top ends, half of whose lines then ran over the
    /// label's blank margin, was boxed 45 degrees off). A line across bars, at any angle under 90 degrees from them,
    /// meets an edge every module or two; a line off them meets at most a label's edge. So the window whose lines
    /// have the most edge energy (squared steps between samples), measured at `across`, is on the bars; the centre
    /// stays unless another window has 5 % more.
    static func onTheBars(_ c: Point, in image: LumaImage, across u: Point, half: Double, reach: Int) -> Point {
        let v = Point(-u.y, u.x)
        let steps = Int(2 * half)
        let energy: [Double] = (-2 * reach...2 * reach).map { d in
            var previous = bilinear(image, c.x - u.x * half + v.x * Double(d), c.y - u.y * half + v.y * Double(d))
            var sum = 0.0
            for k in 1...steps {
                let t = -half + Double(k)
                let x = bilinear(image, c.x + u.x * t + v.x * Double(d), c.y + u.y * t + v.y * Double(d))
                sum += (x - previous) * (x - previous)
                previous = x
            }
            return sum
        }
        // Window sums over 2 reach + 1 lines, centred at shifts -reach...reach.
        func window(_ shift: Int) -> Double { energy[(shift + reach)...(shift + 3 * reach)].reduce(0, +) }
        let centred = window(0)
        var best = 0
        var bestSum = centred
        for shift in -reach...reach where shift != 0 {
            let sum = window(shift)
            if sum > 1.05 * centred && sum > bestSum { (best, bestSum) = (shift, sum) }
        }
        return Point(c.x + v.x * Double(best), c.y + v.y * Double(best))
    }

    /// The box around ZBar's hits with one side across the bars: the hits' extent along `across` and along the bars.
    static func box(of points: [Point], across u: Point) -> [Point] {
        guard points.count >= 2 else { return points }
        let v = Point(-u.y, u.x)
        let us = points.map { $0.x * u.x + $0.y * u.y }
        let vs = points.map { $0.x * v.x + $0.y * v.y }
        let u0 = us.min()!
        let u1 = us.max()!
        let v0 = vs.min()!
        let v1 = vs.max()!
        func at(_ a: Double, _ b: Double) -> Point { Point(a * u.x + b * v.x, a * u.y + b * v.y) }
        return OrientedBox.normalizedOrder([at(u0, v0), at(u1, v0), at(u1, v1), at(u0, v1)])
    }

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

    /// The box cut across the bars where the read's own first and last bar lie (`ends`, on one scan line): an end
    /// past them by more than `slack` (a module) is moved back to them along the box's sides. An end short of them
    /// stays (the line's ends say where the read is, not how far the bars' ends let a box go).
    static func trimmed(_ corners: [Point], to ends: (Point, Point), across u: Point, slack: Double) -> [Point] {
        guard corners.count == 4 else { return corners }
        func t(_ p: Point) -> Double { p.x * u.x + p.y * u.y }
        let (a, b) = (t(ends.0), t(ends.1))
        let (lo, hi) = (min(a, b), max(a, b))
        let ts = corners.map(t)
        let order = ts.indices.sorted { ts[$0] < ts[$1] }
        let near = Set(order.prefix(2))
        var out = corners
        for i in corners.indices {
            // The corner's partner at the other end: its neighbour round the box that lies at the other end.
            let partner = [(i + 1) % 4, (i + 3) % 4].first { near.contains($0) != near.contains(i) }
            guard let j = partner else { continue }
            let target = near.contains(i) ? lo : hi
            let past = near.contains(i) ? ts[i] < lo - slack : ts[i] > hi + slack
            guard past, abs(ts[i] - ts[j]) > 1e-9 else { continue }
            let f = (target - ts[j]) / (ts[i] - ts[j])
            out[i] = Point(
                corners[j].x + (corners[i].x - corners[j].x) * f, corners[j].y + (corners[i].y - corners[j].y) * f)
        }
        return out
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
        // Every window starts on the line strongest over the whole code.
        let strongest = barEnds(
            in: image, mid: mid, unit: unit, vUnit: vUnit, from: s0, to: s1, within: height / 2, limit: limit,
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
        // that makes it half as large again has found something other than these bars (its windows' walk led off
        // them into a busy background: a 25-px strip of bars boxed 800 px high), and the first fit stands.
        func area(_ q: [Point]) -> Double {
            abs(
                q.indices.reduce(0.0) { sum, i in
                    sum + q[i].x * q[(i + 1) % q.count].y - q[(i + 1) % q.count].x * q[i].y
                }) / 2
        }
        let agrees =
            again.length <= 1.5 * fitted.length + 4
            && area(again.corners) <= 1.5 * area(fitted.corners) + 4 * fitted.length
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

    /// Where the bars begin and end on one line parallel to `unit`, `r` px along `vUnit` from `mid`: the outermost
    /// dark samples within a window around the expected ends (`start` and `start + length` along `unit`), then
    /// outward bar by bar while the light gap before the next bar is shorter than a quiet zone. The edges lie half
    /// a sample out from the outermost dark samples, where the luma crosses the code's middle level. Nil where the
    /// line shows too little contrast to tell bars from spaces.
    static func lineEnds(
        in image: LumaImage, at r: Double, near start: Double, _ length: Double, mid: Point, unit: Point, vUnit: Point
    ) -> (first: Double, last: Double, offImage: Bool)? {
        let window = max(3.0, 0.04 * length)
        let reach = Int(length)  // how far past each expected end a missed part of the code may lie
        let base = Point(mid.x + vUnit.x * r + unit.x * start, mid.y + vUnit.y * r + unit.y * start)
        // One sample per pixel along u, from `reach` before the expected start to `reach` past its end.
        let from = -Double(reach)
        let count = Int(length) + 2 * reach + 1
        var samples = [UInt8](repeating: 0, count: count)
        var inside = [Bool](repeating: false, count: count)
        for k in 0..<count {
            let t = from + Double(k)
            let x = base.x + unit.x * t
            let y = base.y + unit.y * t
            samples[k] = luma(image, x, y)
            inside[k] = x >= 0 && y >= 0 && x < Double(image.width) && y < Double(image.height)
        }
        // Threshold from the expected code alone, not the background around it.
        let code = samples[reach...(reach + Int(length))]
        guard let lo = code.min(), let hi = code.max(), Int(hi) - Int(lo) >= 40 else { return nil }
        let threshold = (Int(lo) + Int(hi)) / 2
        func dark(_ k: Int) -> Bool { Int(samples[k]) < threshold }
        let w = Int(window)
        // The outermost dark samples within the window around each expected end...
        guard var first = ((reach - w)...(reach + w)).first(where: dark),
            var last = stride(from: reach + Int(length) + w, through: reach + Int(length) - w, by: -1)
                .first(where: { $0 < count && dark($0) }),
            last > first
        else { return nil }
        // ...then outward bar by bar while the light gap before the next bar is shorter than a quiet zone
        // (6 modules: codes' widest inner space is 4 modules, their quiet zones at least 7).
        // The module width from the dark runs' lower quartile, not their minimum: a thin bar sampled across a
        // tilted, interpolated picture can measure a pixel short, and a quiet zone judged from it would stop
        // at the first 4-module space inside the code. At 1.5 modules a pixel the quartile is still a whole
        // pixel short (1 for 1.4), so the module is also judged from the bars' and spaces' mean width, which
        // is 1.4 to 1.8 modules in every 1D symbology's characters: the span over the runs, over 1.75.
        var runs: [Int] = []
        var run = 0
        for k in first...last {
            if dark(k) {
                run += 1
            } else if run > 0 {
                runs.append(run)
                run = 0
            }
        }
        if run > 0 { runs.append(run) }
        let quartile = runs.isEmpty ? 1 : max(1, runs.sorted()[runs.count / 4])
        // (Spaces between the bars: one fewer than the bars. Too few runs say nothing about a mean.)
        let elements = 2 * runs.count - 1
        let meanWidth = elements >= 9 ? Double(last - first + 1) / Double(elements) / 1.75 : 0
        // (At most twice the quartile: blur that merges bars makes the mean too wide, and a quiet zone judged
        // from it would run through the label's margin onto the background.)
        let quiet = 6 * max(Double(quartile), min(meanWidth, 2 * Double(quartile)))
        // Walking off the image before a quiet zone is complete: the code may go on past the edge.
        var offImage = false
        var k = first - 1
        var gap = 0.0
        while k >= 0 && gap < quiet {
            if !inside[k] {
                offImage = true
                break
            }
            if dark(k) {
                first = k
                gap = 0
            } else {
                gap += 1
            }
            k -= 1
        }
        k = last + 1
        gap = 0.0
        while k < count && gap < quiet {
            if !inside[k] {
                offImage = true
                break
            }
            if dark(k) {
                last = k
                gap = 0
            } else {
                gap += 1
            }
            k += 1
        }
        // The edge between the last light and the first dark sample, where the luma crosses the threshold.
        func crossing(_ dark: Int, _ light: Int) -> Double {
            guard light >= 0, light < count else { return Double(dark) }
            let a = Double(samples[light])
            let b = Double(samples[dark])
            let f = a > b ? (a - Double(threshold)) / (a - b) : 0.5
            return Double(light) + f * Double(dark - light)
        }
        return (
            start + from + crossing(first, first - 1), start + from + crossing(last, last + 1),
            offImage
        )
    }

    /// The bars' own top and bottom, in pixels along `vUnit` from the line through `mid` across the bars (from
    /// `s0` to `s1` along `unit`): ZBar reports only the lines it decoded on, which can be a few rows of a tall
    /// code, or one (a box of no height at all). The strongest line within the reported box (its samples' spread)
    /// is on the bars; outward from it, a line is on the bars while its covariance with the line before it, over
    /// that line's spread, stays above half the strongest line's spread: the share of the bars' own pattern it
    /// carries (a bar fading out, blurred, falls through half where its contrast does; a label's margin, printed
    /// digits or a busy background past the bars carry none of it, whatever their own contrast). The edge lies
    /// where it crosses half, to a fraction of a pixel. (0, 0) when the lines show no bars.
    static func barEnds(
        in image: LumaImage, mid: Point, unit: Point, vUnit: Point, from s0: Double, to s1: Double, within: Double,
        limit: Int, start: Int? = nil, strongestOnly: Bool = false
    ) -> (top: Double, bottom: Double, strongest: Int) {
        let span = Int(s1 - s0)
        guard span >= 8, limit >= 1 else { return (0, 0, 0) }
        // At most about 64 samples a line, so that a long code costs no more than a short one: every frame's codes
        // are boxed in tracked mode.
        let sampleStep = max(1, span / 64)
        let count = span / sampleStep + 1
        // One line's samples, less their mean; nil where a sample would leave the image (a line that leaves it is
        // not judged: its samples would repeat the image's edge row).
        var lines: [Int: [Double]?] = [:]
        func line(_ d: Int) -> [Double]? {
            if let l = lines[d] { return l }
            let o = Point(mid.x + vUnit.x * Double(d), mid.y + vUnit.y * Double(d))
            let start = Point(o.x + unit.x * s0, o.y + unit.y * s0)
            var values: [Double]
            if let fast = lineSamples(image, from: start, step: unit, count: count, every: sampleStep) {
                values = fast
            } else {
                values = [Double](repeating: 0, count: count)
                for k in 0..<count {
                    let t = Double(k * sampleStep)
                    let x = start.x + unit.x * t
                    let y = start.y + unit.y * t
                    guard x >= 0, y >= 0, x <= Double(image.width), y <= Double(image.height) else {
                        lines[d] = .some(nil)
                        return nil
                    }
                    values[k] = bilinear(image, x, y)
                }
            }
            let mean = values.reduce(0, +) / Double(count)
            for k in 0..<count { values[k] -= mean }
            lines[d] = values
            return values
        }
        func spread(_ l: [Double]) -> Double { (l.reduce(0) { $0 + $1 * $1 } / Double(count)).squareRoot() }
        // The strongest line within the reported box (ZBar decoded there), not past it: a neighbouring code
        // along the bars can have more contrast than this one. Every few lines first, then every line around
        // the best of those (the contrast is smooth along bars).
        // (Given: the strongest over the whole code, so that every window of one code starts on the same bars,
        // not one on a second label stacked against the first within ZBar's box.)
        let own = min(limit, max(1, Int(within.rounded(.up))))
        func strength(_ d: Int) -> Double { line(d).map(spread) ?? 0 }
        let coarse = max(1, own / 6)
        let rough = stride(from: -own, through: own, by: coarse).max(by: { strength($0) < strength($1) }) ?? 0
        let near = max(-own, rough - coarse)...min(own, rough + coarse)
        guard let strongest = start ?? near.max(by: { strength($0) < strength($1) }), strength(strongest) >= 6 else {
            return (0, 0, 0)
        }
        // (Asked for the strongest line alone: no walk.)
        if strongestOnly { return (0, 0, strongest) }
        let full = strength(strongest)
        let half = full / 2
        // Out from the strongest line each way, to the first line that carries under half of the bars' pattern,
        // or hardly any of it. Each line is held against the line before it (bars sampled at an angle to their
        // pixels alias, and their pattern drifts from line to line), and against the last line that was surely on
        // the bars (four fifths of its pattern carried, and four fifths alike): a blurred boundary a pixel above
        // printed digits or a busy background would otherwise lead on into them, line by line.
        func dot(_ a: [Double], _ b: [Double]) -> Double { zip(a, b).reduce(0) { $0 + $1.0 * $1.1 } / Double(count) }
        func edge(_ step: Int) -> Double {
            guard var previous = line(strongest) else { return Double(strongest) }
            var anchor = previous
            var d = strongest
            var inside = full
            while abs(d + step) <= limit, let next = line(d + step) {
                let (sp, sn, sa) = (spread(previous), spread(next), spread(anchor))
                let carried = sp > 0 ? dot(previous, next) / sp : 0
                let alike = sn > 0 && sp > 0 ? carried / sn : 0
                let kin = sn > 0 && sa > 0 ? dot(anchor, next) / (sa * sn) : 0
                if carried < half || kin < 0.25 {
                    let f = carried < half && inside > carried ? (inside - half) / (inside - carried) : 0.5
                    return Double(d) + f * Double(step)
                }
                if carried >= 0.8 * full, alike >= 0.8 { anchor = next }
                previous = next
                inside = carried
                d += step
            }
            return Double(d) + 0.5 * Double(step)
        }
        return (edge(-1), edge(1), strongest)
    }

    /// A code ZBar read on one scan line only, or on a few whose hits pile at one end of it: the hits say little
    /// of where the code runs. Along the scan line through the hit, the run of bars that holds it is found (bar by
    /// bar while the gaps stay shorter than a quiet zone), and along the lines 2 and 4 pixels to either side.
    ///
    /// - Parameters:
    ///   - whole: the read must come from a line that crossed the whole code. A line that enters or leaves a tilted
    ///     code through its bars' ends reads a part of it, which a variable-length symbology without a check
    ///     character (I2/5, CODE-39, Codabar) can take for a shorter valid code; the lines beside it, nearer the
    ///     code's middle, cross more of it. Where no line beside the hit's crosses a longer run of bars, the read
    ///     stands; where one does, `readEnds` decides. (A part is at least a character, 10 modules and more; 5 %
    ///     of the run or 4 px is what a whole code's runs differ by from line to line: its thin end bars are
    ///     sampled across a tilt, to the pixel.) Without `whole` (EAN and UPC, whose halves ZBar joins from
    ///     different lines; CODE-128 and CODE-93, whose check characters a part fails), the longest of these runs
    ///     is the code's extent.
    ///   - readEnds: where the read's own characters begin and end on the hit's line (ZBar's decoder run along it,
    ///     `ZBarLineDecoder`), asked only when a line beside is longer: the walk may have stopped short of the
    ///     code's end (a faint patch, blur where the line grazes the bars' ends) rather than at it. A part leaves
    ///     the code going on past one of its ends on a line beside it; a whole read reaches as far as they do,
    ///     and is then boxed on those ends. Without them such a read is dropped.
    /// - Returns: the run's two ends and the direction across the bars judged around it, or nil.
    static func singleLineSpan(
        hit: Point, scan: Point, whole: Bool, in image: LumaImage, readEnds: (() -> (Point, Point)?)? = nil
    ) -> (ends: [Point], across: Point)? {
        func length(_ r: (Point, Point, offImage: Bool)) -> Double {
            ((r.1.x - r.0.x) * (r.1.x - r.0.x) + (r.1.y - r.0.y) * (r.1.y - r.0.y)).squareRoot()
        }
        let normal = Point(-scan.y, scan.x)
        // The run of bars along the line through `p`: nil where that line shows none, or (`whole`) runs off the
        // image. A line that runs off the image before a quiet zone may be a cut code's; one that did across 8
        // modules of light may have crossed a quiet zone measured in over-wide modules, so 6 are tried before
        // giving up.
        func runOn(_ p: Point) -> (Point, Point, offImage: Bool)? {
            guard let wide = run(through: p, along: scan, quiet: 8, in: image),
                let line = wide.offImage ? run(through: p, along: scan, quiet: 6, in: image) : wide,
                !line.offImage || !whole, length(line) >= 8
            else { return nil }
            return line
        }
        // The hit's own line; where it shows no run of bars, the nearest line beside it (up to 4 px along the bars)
        // whose run reaches the hit. ZBar can read a code on its bars' last row, where blur leaves them too faint
        // to tell from the label's dark edge nearby (an I2/5 read by ZBar and the stock element, frame 16 of the
        // small scene's seed 46 at 1280x720, dropped here as a read whose extent could not be told).
        func reaches(_ r: (Point, Point, offImage: Bool)) -> Bool {
            func along(_ q: Point) -> Double { (q.x - hit.x) * scan.x + (q.y - hit.y) * scan.y }
            let (a, b) = (along(r.0), along(r.1))
            return min(a, b) <= 3 && max(a, b) >= -3
        }
        let lines = [0.0, -1, 1, -2, 2, -3, 3, -4, 4].lazy.compactMap {
            (d: Double) -> (Point, Point, offImage: Bool)? in
            guard let r = runOn(Point(hit.x + normal.x * d, hit.y + normal.y * d)) else { return nil }
            return d == 0 || reaches(r) ? r : nil
        }
        guard var line = lines.first else { return nil }
        // The longest run on the lines 2 and 4 px beside `line`, where longer than it by more than the line-to-line
        // difference. (A line beside it that runs off the image says nothing: the background past the edge is
        // unknown.)
        func middle(_ r: (Point, Point, offImage: Bool)) -> Point { r.0.halfway(to: r.1) }
        func longerBeside(_ line: (Point, Point, offImage: Bool)) -> (Point, Point, offImage: Bool)? {
            let crossed = length(line)
            let mid = middle(line)
            var longest: (Point, Point, offImage: Bool)? = nil
            for d in [-4.0, -2.0, 2.0, 4.0] {
                let beside = Point(mid.x + normal.x * d, mid.y + normal.y * d)
                guard let other = run(through: beside, along: scan, quiet: 8, in: image), !other.offImage,
                    length(other) > crossed + max(4, crossed / 20), length(other) > longest.map(length) ?? 0
                else { continue }
                longest = other
            }
            return longest
        }
        if let other = longerBeside(line) {
            if !whole {
                // The longest run is the code's extent.
                line = other
            } else {
                // Shorter than a line beside it: a part, or a walk that stopped short of the code's end. The
                // read's own ends tell (`readEnds`), judged beside them and beside the walked line (the hit's own or
                // one up to 4 px from it). (CODE-39 of 1.1-1.4 px modules read whole by ZBar on lines grazing its
                // first bars' ends, walked 6-13 px short; I2/5 of 1.25 px modules walked 26 px of 71: seeds 63, 66,
                // 74, 75 and 85.)
                guard let ends = readEnds?(), !continuesPast(ends, along: scan, alsoBeside: [middle(line)], in: image)
                else { return nil }
                line = (ends.0, ends.1, false)
            }
        }
        let across = acrossBars(in: image, around: Bounds(enclosing: [line.0, line.1])) ?? scan
        return ([line.0, line.1], across)
    }

    /// Whether a 1D code goes on past a read's ends (on one scan line, along `scan`): a run of bars on a line 2 or
    /// 4 px beside the read's middle (or beside one of `alsoBeside`) reaches past either end by more than the
    /// line-to-line difference (4 px or 5 % of the read) and the bars' lean (a line d px beside crosses bars that lean
    /// by θ from the line's normal d·tanθ further along). A read of a part stops inside the code, and the code
    /// continues on the lines beside it. (Not whether such a line is longer: across a tilted code the lines beside
    /// are cut by the bars' ends too, and a part of 124 px had a line beside it of 130 px that began 11 px before
    /// it.) The read's own line, walked the same way, counts as part of the read: a run beside that bridges the same
    /// gap (to a label's edge or a neighbour within a quiet zone of the walk's) says nothing.
    static func continuesPast(
        _ ends: (Point, Point), along scan: Point, alsoBeside extra: [Point] = [], in image: LumaImage
    ) -> Bool {
        var (a, b) = (min(ends.0.dot(scan), ends.1.dot(scan)), max(ends.0.dot(scan), ends.1.dot(scan)))
        let tolerance = max(4, (b - a) / 20)
        let middle = ends.0.halfway(to: ends.1)
        if let own = run(through: middle, along: scan, quiet: 8, in: image), !own.offImage {
            a = min(a, own.0.dot(scan), own.1.dot(scan))
            b = max(b, own.0.dot(scan), own.1.dot(scan))
        }
        let normal = Point(-scan.y, scan.x)
        // tanθ, judged only once a run beside goes past the plain tolerance (the direction across the bars is a
        // structure tensor over the read's area).
        var judgedLean: Double? = nil
        func lean() -> Double {
            if let judgedLean { return judgedLean }
            let across = acrossBars(in: image, around: Bounds(enclosing: [ends.0, ends.1])) ?? scan
            let cosine = max(0.5, abs(across.dot(scan)))
            let tangent = (1 - cosine * cosine).squareRoot() / cosine
            judgedLean = tangent
            return tangent
        }
        return ([middle] + extra).contains { m in
            [-4.0, -2.0, 2.0, 4.0].contains { d in
                guard
                    let other = run(
                        through: Point(m.x + normal.x * d, m.y + normal.y * d), along: scan, quiet: 8, in: image),
                    !other.offImage
                else { return false }
                let past = max(
                    a - min(other.0.dot(scan), other.1.dot(scan)), max(other.0.dot(scan), other.1.dot(scan)) - b)
                return past > tolerance && past > tolerance + abs(d) * lean()
            }
        }
    }

    /// The run of bars through `p` along `dir`: from the dark samples near `p`, outward bar by bar while the light
    /// gap before the next bar is shorter than a quiet zone (6 of the narrowest bars; `refine` also judges the
    /// module from the bars' mean width, which this single-line walk does not yet). Its first and
    /// last dark pixels, or nil where there is too little contrast to tell bars from spaces.
    static func run(through p: Point, along dir: Point, quiet quietModules: Int = 6, in image: LumaImage) -> (
        Point, Point, offImage: Bool
    )? {
        let reach = max(image.width, image.height)
        let w = 12
        func at(_ t: Int) -> Point { Point(p.x + dir.x * Double(t), p.y + dir.y * Double(t)) }
        func inside(_ q: Point) -> Bool {
            q.x >= 0 && q.y >= 0 && q.x < Double(image.width) && q.y < Double(image.height)
        }
        let near = (-w...w).map { luma(image, at($0).x, at($0).y) }
        guard let lo = near.min(), let hi = near.max(), Int(hi) - Int(lo) >= 20 else { return nil }
        let threshold = (Int(lo) + Int(hi)) / 2
        func dark(_ t: Int) -> Bool { Int(luma(image, at(t).x, at(t).y)) < threshold }
        var runs: [Int] = []
        var current = 0
        for v in near {
            if Int(v) < threshold {
                current += 1
            } else if current > 0 {
                runs.append(current)
                current = 0
            }
        }
        if current > 0 { runs.append(current) }
        guard !runs.isEmpty, let nearest = (0...w).first(where: { dark($0) || dark(-$0) }) else { return nil }
        let module = max(1, runs.sorted()[runs.count / 4])
        let quiet = quietModules * module
        // Outward from the bar nearest `p`, one way and then the other: bar by bar while the gap before the next
        // is shorter than `quiet`, and never into a dark stretch wider than any bar: past a label's edge the dark
        // background would otherwise read as more bars. Blur merges two wide bars and the narrow space between
        // them into one dark stretch (7 modules in I2/5 at a ratio of 3), and the module can measure short (the
        // lower quartile of blurred 1.3 px bars is 1 px): 12 modules.
        let widestBar = 12 * module
        let start = dark(nearest) ? nearest : -nearest
        var offImage = false
        func walk(_ step: Int) -> Int {
            var end = start  // the last dark pixel of the last bar taken
            var pending = start  // the same in the bar being crossed
            var t = start + step
            var gap = 0
            var bar = 0
            while abs(t) < reach, gap < quiet {
                guard inside(at(t)) else {
                    offImage = true
                    break
                }
                if dark(t) {
                    bar += 1
                    gap = 0
                    if bar > widestBar { return end }
                    pending = t
                } else {
                    if bar > 0 { end = pending }
                    gap += 1
                    bar = 0
                }
                t += step
            }
            return bar > 0 ? pending : end
        }
        let from = walk(-1)
        let to = walk(1)
        return (at(from), at(to + 1), offImage)
    }

    /// The luma at a point between pixel centres, interpolated from the four around it (pixel (i, j) covers
    /// i...i+1, j...j+1, its centre at i + 0.5, j + 0.5).
    static func bilinear(_ image: LumaImage, _ x: Double, _ y: Double) -> Double {
        let fx = x - 0.5
        let fy = y - 0.5
        let x0 = min(max(Int(fx.rounded(.down)), 0), image.width - 1)
        let y0 = min(max(Int(fy.rounded(.down)), 0), image.height - 1)
        let x1 = min(x0 + 1, image.width - 1)
        let y1 = min(y0 + 1, image.height - 1)
        let ax = min(max(fx - Double(x0), 0), 1)
        let ay = min(max(fy - Double(y0), 0), 1)
        func at(_ x: Int, _ y: Int) -> Double {
            Double(image.base.load(fromByteOffset: y * image.stride + x, as: UInt8.self))
        }
        let top = at(x0, y0) * (1 - ax) + at(x1, y0) * ax
        let bottom = at(x0, y1) * (1 - ax) + at(x1, y1) * ax
        return top * (1 - ay) + bottom * ay
    }

    /// `count` samples along a line (from `start`, `every` pixels along `step`), each as `bilinear` samples it, in
    /// 16.16 fixed point stepped along the line; nil when the line's ends are not both where all four neighbours of
    /// every sample lie inside the image (then `bilinear`'s clamps are needed). `barEnds` judges a hundred lines
    /// for each code it boxes, in every frame of tracked mode: sampled through `bilinear`, that was 9 % of 6 demo
    /// streams' CPU.
    static func lineSamples(_ image: LumaImage, from start: Point, step: Point, count: Int, every: Int) -> [Double]? {
        guard count > 0 else { return nil }
        let end = Point(
            start.x + step.x * Double((count - 1) * every), start.y + step.y * Double((count - 1) * every))
        func inside(_ p: Point) -> Bool {
            p.x >= 0.5 && p.y >= 0.5 && p.x < Double(image.width) - 0.5 && p.y < Double(image.height) - 0.5
        }
        guard inside(start), inside(end) else { return nil }
        let one = 65536.0
        var fx = Int(((start.x - 0.5) * one).rounded())
        var fy = Int(((start.y - 0.5) * one).rounded())
        let dx = Int((step.x * Double(every) * one).rounded())
        let dy = Int((step.y * Double(every) * one).rounded())
        let base = image.base.assumingMemoryBound(to: UInt8.self)
        let stride = image.stride
        return [Double](unsafeUninitializedCapacity: count) { buffer, initialized in
            for k in 0..<count {
                // (Rounding the steps can carry a sample a hair past the line's ends: the position, fraction and
                // all, is kept on the image, as `bilinear` clamps it.)
                let cx = min(max(fx, 0), (image.width - 1) << 16)
                let cy = min(max(fy, 0), (image.height - 1) << 16)
                let xi = min(cx >> 16, image.width - 2)
                let yi = min(cy >> 16, image.height - 2)
                let ax = cx - (xi << 16)  // up to 65536: the pixel right of xi
                let ay = cy - (yi << 16)
                let p = base + yi * stride + xi
                let top = Int(p[0]) * (65536 - ax) + Int(p[1]) * ax
                let bottom = Int(p[stride]) * (65536 - ax) + Int(p[stride + 1]) * ax
                buffer[k] = Double(top * (65536 - ay) + bottom * ay) / (one * one)
                fx += dx
                fy += dy
            }
            initialized = count
        }
    }

    static func luma(_ image: LumaImage, _ x: Double, _ y: Double) -> UInt8 {
        let xi = min(max(Int(x.rounded(.down)), 0), image.width - 1)
        let yi = min(max(Int(y.rounded(.down)), 0), image.height - 1)
        return image.base.load(fromByteOffset: yi * image.stride + xi, as: UInt8.self)
    }

    static func median(_ values: [Double]) -> Double {
        let s = values.sorted()
        return s[s.count / 2]
    }
}
