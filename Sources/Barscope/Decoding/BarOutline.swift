import Foundation

/// A 1D code's outline, one estimate from the image and the decoder's own edges.
///
/// Its input is the read: one or more lines on which a decoder placed the code's first bar's leading edge and its
/// last bar's trailing edge (ZBar's decoder run along the rows or columns it read on, zxing-cpp's scan lines). From
/// them and the image:
/// 1. the direction across the bars: the structure tensor of the luma's gradient over the read's lines, judged again
///    on the outlined bars from their profile (`acrossBarsFromProfile`), and the outline fitted again along it;
/// 2. the two ends across the bars: where the read put its first and last bar (the median over its lines);
/// 3. the bars' ends along them, in windows across the code: out from the read's line while each line carries the
///    bars' pattern (`barEnds`); a line through each side's window ends (perspective leaves them sloped);
/// 4. the end edges: the first and last bar's edge followed from the read's line up and down the bars, each line's
///    found within a module or two of where the lines before put it; a line through each end's.
///
/// The corners are where the four lines meet: a perspective view's quadrilateral, not forced to a rectangle. The
/// same geometry says whether the read is a part of a longer code (bars go on past an end, within less than a
/// quiet zone, across the bars' height) and whether the image's edge cuts a quiet zone. Windows and tolerances are
/// numbers of modules (the read's length over its symbology's fewest modules) or fractions of the code's size.
struct BarOutline {
    /// TL, BL, BR, TR as `OrientedBox` orders them.
    var corners: [Point]
    /// The unit direction across the bars (the way they follow one another), the same way round as the read.
    var across: Point
    /// From the first bar's leading edge to the last bar's trailing edge, across the bars, at mid-height.
    var length: Double
    /// The read's length over its symbology's fewest modules: a module, or a little more.
    var module: Double
    /// A quiet zone (10 modules) past one of the ends lies outside the image: the code may go on past its edge.
    var runsOffImage: Bool
    /// Bars go on past one of the ends within a quiet zone, over most of the bars' height: the read is a part.
    var goesOnPast: Bool

    /// The outline of the code read on `reads` (each from its first bar's leading edge to its last bar's trailing
    /// edge, in the order the line ran), whose symbology and text span at least `modules` modules (nil: unknown);
    /// `hits`, where else the decoder read it (ZBar's other lines: they say how far the bars reach along
    /// themselves at least). Nil when the reads are too short or the image shows no bars there.
    /// Reads that no decoder placed (`exact` false: runs of bars walked along a scan line, or the extent of the
    /// hits) say where the code is, not where it ends: its ends are then walked out along the direction across its
    /// bars, bar by bar to a quiet zone, on seven lines over the bars' height (`lineEnds`).
    /// The direction across the bars is judged twice: by the structure tensor over the reads' area, then on the bars
    /// as that first outline has them, from their profile (`across`, given: the second time).
    static func estimate(
        reads: [(Point, Point)], exact: Bool = true, hits: [Point] = [], modules: Int?, across given: Point? = nil,
        in image: LumaImage
    ) -> BarOutline? {
        guard let first = reads.first, first.0.distance(to: first.1) >= 8 else {
            return nil
        }
        let asRead = reads
        // 1. Across the bars, the same way round as the read's line.
        let line = first.1 - first.0
        let lineUnit = Point(line.x / first.0.distance(to: first.1), line.y / first.0.distance(to: first.1))
        let seen = reads.flatMap { [$0.0, $0.1] } + hits
        var u = given ?? BarOutline.acrossBars(in: image, around: Bounds(enclosing: seen)) ?? lineUnit
        if u.dot(lineUnit) < 0 { u = Point(-u.x, -u.y) }
        let v = Point(-u.y, u.x)

        // 2. The ends across the bars, in (s, r): s along u, r along v, from the middle read's middle.
        // The origin: the middle read's middle, moved along the bars to the middle of the reads' lines (all of
        // them on the bars, where the decoder saw every bar).
        let middle = reads[reads.count / 2].0.halfway(to: reads[reads.count / 2].1)
        let offsets = reads.map { ($0.0.halfway(to: $0.1) - middle).dot(v) }
        let centre = ((offsets.max() ?? 0) + (offsets.min() ?? 0)) / 2
        let origin = Point(middle.x + v.x * centre, middle.y + v.y * centre)
        func s(_ p: Point) -> Double { (p - origin).dot(u) }
        func r(_ p: Point) -> Double { (p - origin).dot(v) }
        func at(_ s: Double, _ r: Double) -> Point {
            Point(origin.x + u.x * s + v.x * r, origin.y + u.y * s + v.y * r)
        }
        // Where the reads put the code's ends across the bars (for reads no decoder placed, where the code was
        // seen: its ends are walked out from there below, once the bars' height is known).
        let along = seen.map(s)
        var s0 = exact ? BarOutline.median(reads.map { s($0.0) }) : along.min()!
        var s1 = exact ? BarOutline.median(reads.map { s($0.1) }) : along.max()!
        var length = s1 - s0
        guard length >= (exact ? 8 : 4) else { return nil }
        var module = max(1, length / Double(modules ?? 50))
        let rs = reads.map { r($0.0.halfway(to: $0.1)) }
        let spread = (rs.max() ?? 0) - (rs.min() ?? 0)
        // How far along the bars the decoder read the code: the bars reach at least that far.
        let seenAlong = seen.map(r)
        let reach = (seenAlong.max() ?? 0) - (seenAlong.min() ?? 0)

        // 3. The bars' ends along them, window by window across the code (from `a` to `b` in s), every window
        // starting on the line strongest over the whole code among the read's lines: r = a + b s through the
        // windows' ends at each side (level through their median with fewer than three windows; the read's own
        // lines, a pixel beyond, with none).
        // (Looked for between the reads' lines only: past them a label's edge met at a slant, or a neighbour, can
        // have more contrast than the bars.)
        let within = max(1, spread / 2)
        func sides(from a: Double, to b: Double) -> (top: (Double, Double), bottom: (Double, Double)) {
            let limit = Int(max(2 * reach, b - a))
            let strongest = BarOutline.barEnds(
                in: image, mid: origin, unit: u, vUnit: v, from: a, to: b, within: within, limit: limit,
                strongestOnly: true
            ).strongest
            let windows = max(1, min(4, Int((b - a) / 24)))
            var tops: [Point] = []
            var bottoms: [Point] = []
            for w in 0..<windows {
                let wa = a + (b - a) * Double(w) / Double(windows)
                let wb = a + (b - a) * Double(w + 1) / Double(windows)
                let (top, bottom, _) = BarOutline.barEnds(
                    in: image, mid: origin, unit: u, vUnit: v, from: wa, to: wb, within: within, limit: limit,
                    start: strongest)
                guard top != 0 || bottom != 0 else { continue }
                tops.append(Point((wa + wb) / 2, top))
                bottoms.append(Point((wa + wb) / 2, bottom))
            }
            // (A slope wants three windows at least: through two, one window whose walk went astray tilts the side
            // as far as it strayed.)
            func side(_ points: [Point], _ fallback: Double) -> (Double, Double) {
                guard points.count >= 3, let line = BarOutline.fitLine(points) else {
                    return (points.isEmpty ? fallback : BarOutline.median(points.map(\.y)), 0)
                }
                return line
            }
            return (side(tops, (rs.min() ?? 0) - 1), side(bottoms, (rs.max() ?? 0) + 1))
        }
        var (topLine, bottomLine) = sides(from: s0, to: s1)
        func top(_ s: Double) -> Double { topLine.0 + topLine.1 * s }
        func bottom(_ s: Double) -> Double { bottomLine.0 + bottomLine.1 * s }

        // Reads no decoder placed: the ends walked out from where they were seen along the direction across the
        // bars, bar by bar to a quiet zone, on seven lines over the bars' middle three fifths (a line that meets a
        // label's edge or print within a quiet zone runs on; most do not); the bars' ends along them then found
        // again over the whole code.
        var reads = reads
        if !exact {
            let middle = (s0 + s1) / 2
            var walked = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8].compactMap { f -> (Point, Point)? in
                let rLine = top(middle) + f * (bottom(middle) - top(middle))
                guard
                    let e = BarOutline.lineEnds(
                        in: image, at: rLine, near: s0, s1 - s0, mid: origin, unit: u, vUnit: v)
                else { return nil }
                return (at(e.first, rLine), at(e.last, rLine))
            }
            // (No line shows the bars' contrast along it: the extent where they were seen stands.)
            if walked.isEmpty {
                walked = [(at(along.min()!, 0), at(along.max()!, 0))]
            }
            reads = walked
            s0 = BarOutline.median(walked.map { s($0.0) })
            s1 = BarOutline.median(walked.map { s($0.1) })
            length = s1 - s0
            guard length >= 8 else { return nil }
            module = max(1, length / Double(modules ?? 50))
            (topLine, bottomLine) = sides(from: s0, to: s1)
        }

        // 4. The end edges, s = c + d r, followed up and down the bars from the read's lines.
        let startEdge = followEdge(
            from: reads.map { Point(r($0.0), s($0.0)) }, top: top(s0), bottom: bottom(s0), outward: -1,
            module: module, s0: s0, s1: s1, at: at, in: image)
        let endEdge = followEdge(
            from: reads.map { Point(r($0.1), s($0.1)) }, top: top(s1), bottom: bottom(s1), outward: 1,
            module: module, s0: s0, s1: s1, at: at, in: image)
        let startLine = BarOutline.fitLine(startEdge.found) ?? (s0, 0)
        let endLine = BarOutline.fitLine(endEdge.found) ?? (s1, 0)
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
        // A fit gone wild (a degenerate line through two points) keeps the box square to the bars.
        let box = [at(s0, top(s0)), at(s0, bottom(s0)), at(s1, bottom(s1)), at(s1, top(s1))]
        let sane = zip(quad, box).allSatisfy { $0.distance(to: $1) <= 0.25 * length + 4 }
        let rMid = (top((s0 + s1) / 2) + bottom((s0 + s1) / 2)) / 2
        let (sStart, sEnd) = sane ? (startLine.0 + startLine.1 * rMid, endLine.0 + endLine.1 * rMid) : (s0, s1)

        // A quiet zone past each end, at mid-height, inside the image.
        let quiet = 10 * module
        let (w, h) = (Double(image.width), Double(image.height))
        let runsOffImage = [at(sStart - quiet, rMid), at(sEnd + quiet, rMid)].contains {
            $0.x < 0 || $0.y < 0 || $0.x > w || $0.y > h
        }
        let outline = BarOutline(
            corners: OrientedBox.normalizedOrder(sane ? quad : box), across: u, length: sEnd - sStart, module: module,
            runsOffImage: runsOffImage, goesOnPast: startEdge.goesOn || endEdge.goesOn)
        // The direction judged again on the bars alone, from their profile, and the outline fitted along it where
        // it differs enough to move it.
        let middleOfBars = at((sStart + sEnd) / 2, rMid)
        let height = bottom((s0 + s1) / 2) - top((s0 + s1) / 2)
        guard given == nil,
            let again = BarOutline.acrossBarsFromProfile(
                in: image, centre: middleOfBars, across: u, length: sEnd - sStart, height: height)
        else { return outline }
        // (Not where turning the outline by the difference moves its ends by under half a pixel.)
        let turn = acos(min(1, again.dot(u)))
        guard turn * (sEnd - sStart) / 2 >= 0.5 else { return outline }
        return estimate(reads: asRead, exact: exact, hits: hits, modules: modules, across: again, in: image) ?? outline
    }

    /// One end edge followed over the bars' height: on lines across the bars at tenths of the height (from `top`
    /// to `bottom`, in r), nearest the read's lines first, the edge from light outside to dark inside (`outward`:
    /// -1 at the start, +1 at the end) nearest to where the points found so far put it, within a module and a
    /// pixel; the read's own points (`from`, (r, s)) are found already. And whether, past the edge, a bar follows
    /// within less than a quiet zone (5 modules: the widest space inside a code is 3 to 4) on most of the lines: the
    /// code goes on.
    static func followEdge(
        from read: [Point], top: Double, bottom: Double, outward: Double, module: Double, s0: Double, s1: Double,
        at: (Double, Double) -> Point, in image: LumaImage
    ) -> (found: [Point], goesOn: Bool) {
        var found = read
        let height = bottom - top
        guard height >= 2 else { return (found, false) }
        let anchor = BarOutline.median(read.map(\.x))
        let lines = (1...9).map { top + height * Double($0) / 10 }.sorted { abs($0 - anchor) < abs($1 - anchor) }
        let window = module + 1
        let reach = Int((5 * module).rounded(.up))
        var goesOn = 0
        var judged = 0
        for rLine in lines {
            // Where the points so far put the edge at this line: square to the direction across the bars (the
            // bars' mean direction) until they span a third of the bars' height, then leaning as they lean (a
            // slope from points a few pixels apart is noise, and followed, it walks off the edge).
            let rs = found.map(\.x)
            let fit = (rs.max()! - rs.min()!) >= height / 3 ? BarOutline.fitLine(found) : nil
            let predicted = fit.map { $0.0 + $0.1 * rLine } ?? BarOutline.median(found.map(\.y))
            // The line's samples over the code and past this end, one a pixel; its threshold the code's middle level.
            let from = min(s0, predicted - window - Double(reach)) - 1
            let to = max(s1, predicted + window + Double(reach)) + 1
            let count = Int(to - from) + 1
            let start = at(from, rLine)
            let samples = BarOutline.samples(image, from: start, step: at(from + 1, rLine) - start, count: count)
            let code = samples[Int(s0 - from)...Int(s1 - from)]
            guard let lo = code.min(), let hi = code.max(), hi - lo >= 20 else { continue }
            let threshold = (lo + hi) / 2
            // The outermost crossing from light (outside) to dark (inside) within the window: the bars' own
            // edges inside it are a module or two apart, and nothing crosses in the quiet zone past it.
            var best: Double? = nil
            let lowK = max(1, Int(predicted - window - from))
            let highK = min(count - 2, Int((predicted + window - from).rounded(.up)))
            if lowK <= highK {
                for k in lowK...highK {
                    let outside = k + Int(outward)
                    let (a, b) = (samples[outside], samples[k])
                    guard a >= threshold, b < threshold else { continue }
                    let sHere = from + Double(k) + Double(outside - k) * (threshold - b) / (a - b)
                    guard abs(sHere - predicted) <= window else { continue }
                    if best == nil || (sHere - best!) * outward > 0 { best = sHere }
                }
            }
            guard let edge = best else { continue }
            found.append(Point(rLine, edge))
            // Past the edge: light for a module (the blurred edge and the quiet zone's start), then a dark sample
            // within five modules is the next bar.
            judged += 1
            let edgeK = Int((edge - from).rounded())
            let past = (Int(module.rounded(.up)) + 1)...reach
            if past.contains(where: { step in
                let k = edgeK + Int(outward) * step
                return k >= 0 && k < count && samples[k] < threshold
            }) {
                goesOn += 1
            }
        }
        return (found, judged >= 3 && 2 * goesOn > judged)
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
