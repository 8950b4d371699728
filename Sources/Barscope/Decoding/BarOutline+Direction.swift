import Foundation

/// The direction across the bars: from the structure tensor, then from the bars' profile; a box along it.
extension BarOutline {
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
        // Integer sums (a gradient squared is under 2^19, a frame's worth of them far under 2^63): the same
        // result as floating point at a third of the instructions.
        var sxx = 0
        var syy = 0
        var sxy = 0
        // The gradient of each 2x2 cell (its right column less its left, its bottom row less its top), both parts
        // at the cell's centre: it sees bars of one pixel (a period of 2) at any angle, which central differences
        // over three pixels do not, and every cell, so that no grid aliases with the bars' period.
        for y in y0..<(y1 - 1) {
            let row = src + y * image.stride
            let below = row + image.stride
            for x in x0..<(x1 - 1) {
                let (a, b, c, d) = (Int(row[x]), Int(row[x + 1]), Int(below[x]), Int(below[x + 1]))
                let gx = (b &+ d) &- (a &+ c)
                let gy = (c &+ d) &- (a &+ b)
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

    /// The direction across bars already outlined (`centre`, `length` across them, `height` along them), within 3
    /// degrees of `initial`: the one along which their profile, averaged along the bars over the middle three fifths
    /// of their height, keeps the largest share of its lines' own variance (a wrong angle smears the bars into one
    /// another). The structure tensor is biased on bars of a pixel or so (their anti-aliased steps lean toward the
    /// pixel grid: 4 degrees off on a 7-degree EAN-8 of 1-px modules); the profile measures the bars themselves.
    /// By a degree, then a quarter around the best; nil for bars too small to judge.
    static func acrossBarsFromProfile(
        in image: LumaImage, centre: Point, across initial: Point, length: Double, height: Double
    ) -> Point? {
        guard length >= 16, height >= 4 else { return nil }
        // At most 160 samples a line (every bar and space is still met in proportion), 15 lines.
        let samples = min(160, Int(length))
        let lines = 15
        let base = atan2(initial.y, initial.x)
        func score(_ angle: Double) -> Double {
            let u = Point(cos(angle), sin(angle))
            let v = Point(-u.y, u.x)
            let step = Point(u.x * length / Double(samples), u.y * length / Double(samples))
            // The profile averaged over the lines, and each line's own variance.
            var profile = [Double](repeating: 0, count: samples)
            var own = 0.0
            for l in 0..<lines {
                let d = 0.6 * height * (Double(l) / Double(lines - 1) - 0.5)
                let t = length * 0.5 / Double(samples) - length / 2
                let start = Point(centre.x + u.x * t + v.x * d, centre.y + u.y * t + v.y * d)
                let line = BarOutline.samples(image, from: start, step: step, count: samples)
                var (sum, squares) = (0.0, 0.0)
                for k in 0..<samples {
                    profile[k] += line[k]
                    sum += line[k]
                    squares += line[k] * line[k]
                }
                let n = Double(samples)
                own += squares / n - (sum / n) * (sum / n)
            }
            own /= Double(lines)
            guard own > 0 else { return 0 }
            let n = Double(samples)
            let means = profile.map { $0 / Double(lines) }
            let meanSum = means.reduce(0, +)
            let meanSquares = means.reduce(0) { $0 + $1 * $1 }
            return (meanSquares / n - (meanSum / n) * (meanSum / n)) / own
        }
        let degree = Double.pi / 180
        var (best, bestScore) = (base, score(base))
        for k in [-3, -2, -1, 1, 2, 3] {
            let a = base + Double(k) * degree
            let sc = score(a)
            if sc > bestScore { (best, bestScore) = (a, sc) }
        }
        let coarse = best
        for k in [-3, -2, -1, 1, 2, 3] {
            let a = coarse + Double(k) * 0.25 * degree
            let sc = score(a)
            if sc > bestScore { (best, bestScore) = (a, sc) }
        }
        guard bestScore > 0 else { return nil }
        return Point(cos(best), sin(best))
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
