import Foundation

/// The profile across the bars: sampled along them, its edges and span, and its sharpened versions for ZBar.
extension HardCodeReader {
    /// Samples per pixel across the bars.
    static let oversample = 4.0
    /// Pixels added beyond the region at each end, for the quiet zones.
    static let margin = 16.0
    /// A 1D code's fewest edges: EAN-8, the shortest (22 bars), less what a blur merges.
    static let fewestEdges = 10

    /// The mean of the image along the bars at each `step` across them (bilinear; off the image, its edge's
    /// pixels: the region is cut there, and the profile stays defined).
    static func profile(
        _ image: LumaImage, center: Point, across: Point, t: ClosedRange<Double>, s: ClosedRange<Double>,
        step: Double, rowStep: Double
    ) -> [Float] {
        let along = Point(-across.y, across.x)
        let src = image.base.assumingMemoryBound(to: UInt8.self)
        let count = Int(((t.upperBound - t.lowerBound) / step).rounded(.down)) + 1
        let rows = max(1, Int(((s.upperBound - s.lowerBound) / rowStep).rounded(.down)) + 1)
        var out = [Float](repeating: 0, count: count)
        let maxX = Double(image.width - 2)
        let maxY = Double(image.height - 2)
        for i in 0..<count {
            let tt = t.lowerBound + Double(i) * step
            var sum: Float = 0
            for r in 0..<rows {
                let ss = s.lowerBound + Double(r) * rowStep
                let x = min(maxX, max(0, center.x + tt * across.x + ss * along.x))
                let y = min(maxY, max(0, center.y + tt * across.y + ss * along.y))
                let xi = Int(x)
                let yi = Int(y)
                let fx = Float(x - Double(xi))
                let fy = Float(y - Double(yi))
                let p = src + yi * image.stride + xi
                let top = Float(p[0]) + fx * (Float(p[1]) - Float(p[0]))
                let bottom = Float(p[image.stride]) + fx * (Float(p[image.stride + 1]) - Float(p[image.stride]))
                sum += top + fy * (bottom - top)
            }
            out[i] = sum / Float(rows)
        }
        return out
    }

    /// Where a profile's edges are: sign changes of its difference from a running mean over `window` samples,
    /// each counted once the difference goes past a fifth of its own largest (a line or a border has one or two
    /// such swings, the averaged noise around them none; a code's bars many, its wide ones the largest).
    static func edges(_ p: [Float], window: Int) -> [Int] {
        guard p.count > 2 * window else { return [] }
        var prefix = [Float](repeating: 0, count: p.count + 1)
        for (i, v) in p.enumerated() { prefix[i + 1] = prefix[i] + v }
        let d = (0..<p.count).map { i -> Float in
            let lo = max(0, i - window / 2)
            let hi = min(p.count, i + window / 2 + 1)
            return p[i] - (prefix[hi] - prefix[lo]) / Float(hi - lo)
        }
        let magnitudes = d.map(abs).sorted()
        let level = magnitudes[magnitudes.count * 199 / 200] / 5
        var out: [Int] = []
        var sign = 0
        for (i, v) in d.enumerated() {
            if v > level && sign <= 0 {
                if sign < 0 { out.append(i) }
                sign = 1
            } else if v < -level && sign >= 0 {
                if sign > 0 { out.append(i) }
                sign = -1
            }
        }
        return out
    }

    /// The samples the bars span: the largest group of edges no further apart than four times their usual
    /// spacing (a quiet zone is ten modules or more; the step from a card to what is around it stands apart).
    static func barSpan(_ edges: [Int]) -> ClosedRange<Int>? {
        guard edges.count >= 2 else { return nil }
        let gaps = zip(edges.dropFirst(), edges).map { $0 - $1 }.sorted()
        let limit = 4 * max(1, gaps[gaps.count / 2])
        var best = edges[0]...edges[0]
        var count = 1
        var bestCount = 1
        var start = edges[0]
        for (a, b) in zip(edges, edges.dropFirst()) {
            if b - a <= limit {
                count += 1
            } else {
                start = b
                count = 1
            }
            if count > bestCount {
                bestCount = count
                best = start...b
            }
        }
        return best
    }

    /// How sharp a profile is: the mean squared difference `lag` samples apart (a tilt left in smears the bars).
    static func sharpness(_ p: [Float], lag: Int) -> Double {
        var sum = 0.0
        var n = 0
        for i in 0..<max(0, p.count - lag) {
            let d = Double(p[i + lag] - p[i])
            sum += d * d
            n += 1
        }
        return n > 0 ? sum / Double(n) : 0
    }

    /// The samples a profile at `oversample` spans with bars (edges within a running mean of 4 px).
    static func bars(of profile: [Float]) -> ClosedRange<Int>? {
        barSpan(edges(profile, window: 4 * Int(oversample)))
    }

    /// Where the first and the last bar begin and end (samples, fractional): from the darkest sample of each end's
    /// bar outward to where the profile is halfway between it and the quiet zone's light.
    static func outerEdges(_ p: [Float], bars: ClosedRange<Int>) -> ClosedRange<Double> {
        let o = Int(oversample)
        func edge(from start: Int, step: Int) -> Double {
            func at(_ i: Int) -> Int { min(p.count - 1, max(0, i)) }
            // The quiet zone's light: the median of 2 to 6 px past the crossing.
            let quiet = (2 * o...6 * o).map { p[at(start + step * $0)] }.sorted()[2 * o]
            // The end bar's darkest sample, within 2 px of the crossing.
            let dark = (-2 * o...2 * o).map { at(start + step * $0) }.min { p[$0] < p[$1] }!
            let half = (quiet + p[dark]) / 2
            var i = dark
            while p[i] < half, (i - dark) * step < 4 * o, i + step >= 0, i + step < p.count { i += step }
            guard i != dark else { return Double(dark) }
            // Between the last sample under half and the first at or over it.
            let under = i - step
            let f = p[i] != p[under] ? Double((half - p[under]) / (p[i] - p[under])) : 0.5
            return Double(under) + f * Double(step)
        }
        let low = edge(from: bars.lowerBound, step: -1)
        let high = edge(from: bars.upperBound, step: 1)
        return low < high ? low...high : Double(bars.lowerBound)...Double(bars.upperBound)
    }

    /// The span along the bars of the rows that vary across them at least half as much as the best rows.
    static func barRows(
        _ image: LumaImage, center: Point, across: Point, t: ClosedRange<Double>, s: ClosedRange<Double>
    ) -> ClosedRange<Double> {
        // Each row's variation, then three rows' together: one row's is mostly noise on the faintest codes.
        var rows: [(s: Double, score: Double)] = []
        var ss = s.lowerBound
        while ss <= s.upperBound {
            let p = profile(image, center: center, across: across, t: t, s: ss...ss, step: 0.5, rowStep: 1)
            rows.append((ss, sharpness(p, lag: 2)))
            ss += 1
        }
        guard rows.count >= 3 else { return s }
        let smooth = rows.indices.map { i in
            (rows[max(0, i - 1)].score + rows[i].score + rows[min(rows.count - 1, i + 1)].score) / 3
        }
        guard let top = smooth.max(), top > 0 else { return s }
        // Half the best: where the bars end (a blurred end is half as sharp where it crosses its middle).
        let kept = rows.indices.filter { smooth[$0] >= top / 2 }
        return (rows[kept.first!].s - 0.5)...(rows[kept.last!].s + 0.5)
    }

    /// The versions of a profile given to ZBar: unsharp masks (sigma in pixels, amount), the profile itself first.
    /// Chosen on the hard scene's seeds 1-3 (`scripts/bench hard`): a mild mask reads most; stronger ones ring,
    /// and read less and misread more.
    static let versions: [(sigma: Double, amount: Double)] = [(1, 0), (0.75, 1), (0.5, 2)]

    /// `p + amount × (p − gauss(p, sigma))`, stretched over 0...255 from the 1st to the 99th percentile of the
    /// bars' samples, and white from a little past the bars on (the quiet zones).
    static func sharpened(_ p: [Float], sigma: Double, amount: Double, bars: ClosedRange<Int>) -> [UInt8] {
        var q = p
        if amount > 0 {
            let radius = Int((3 * sigma).rounded(.up))
            let kernel = (-radius...radius).map { Float(exp(-Double($0 * $0) / (2 * sigma * sigma))) }
            let total = kernel.reduce(0, +)
            for i in 0..<p.count {
                var sum: Float = 0
                for k in -radius...radius {
                    sum += kernel[k + radius] * p[min(p.count - 1, max(0, i + k))]
                }
                q[i] = p[i] + Float(amount) * (p[i] - sum / total)
            }
        }
        let sorted = q[bars].sorted()
        let low = sorted[sorted.count / 100]
        let high = sorted[sorted.count - 1 - sorted.count / 100]
        let span = max(1e-3, high - low)
        // Past the outermost edges by a little more than a wide bar: the last bar is whole, then white.
        let past = 3 * Int(oversample)
        let keep = max(0, bars.lowerBound - past)...min(q.count - 1, bars.upperBound + past)
        return q.indices.map { i in
            keep.contains(i) ? UInt8(max(0, min(255, ((q[i] - low) / span * 255).rounded()))) : 255
        }
    }
}
