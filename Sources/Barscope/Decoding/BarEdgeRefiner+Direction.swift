import Foundation

/// The direction across the bars: from the structure tensor, or searched from the bars' profile; a box along it.
extension BarEdgeRefiner {
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
}
