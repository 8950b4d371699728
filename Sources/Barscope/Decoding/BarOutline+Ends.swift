import Foundation

/// Where the bars begin and end: on one line across them, along them (their top and bottom), and at a read's ends.
extension BarOutline {
    /// Where the bars begin and end on one line parallel to `unit`, `r` px along `vUnit` from `mid`: the outermost
    /// dark samples between `start` and `start + length` along `unit` (a part of the line known to lie on the bars),
    /// then outward bar by bar while the light gap before the next bar is shorter than a quiet zone, as far as that
    /// part's length each way. The edges lie half a sample out from the outermost dark samples, where the
    /// luma crosses the code's middle level. Nil where the line shows too little contrast to tell bars from spaces.
    static func lineEnds(
        in image: LumaImage, at r: Double, near start: Double, _ length: Double, mid: Point, unit: Point, vUnit: Point
    ) -> (first: Double, last: Double, offImage: Bool)? {
        let reach = Int(length)  // how far past each end of the known part the code may go on
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
        guard let lo = code.min(), let hi = code.max(), Int(hi) - Int(lo) >= 20 else { return nil }
        let threshold = (Int(lo) + Int(hi)) / 2
        func dark(_ k: Int) -> Bool { Int(samples[k]) < threshold }
        // The outermost dark samples of the part known to be on the bars...
        guard let inner = (reach...(reach + Int(length))).first(where: dark),
            let outer = (reach...(reach + Int(length))).last(where: dark), outer > inner
        else { return nil }
        var (first, last) = (inner, outer)
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
        // A dark stretch wider than any bar (12 of the narrowest bars: blur merges two wide bars and the space
        // between them) is no bar: past a label's edge the background would otherwise read as more of them, on to
        // the image's edge.
        let widest = 12 * quartile
        let within = { (k: Int) in k >= 0 && k < count }
        let outFirst = walkOut(
            from: first, -1, quiet: quiet, widest: widest, within: within, inside: { inside[$0] }, dark: dark)
        let outLast = walkOut(
            from: last, 1, quiet: quiet, widest: widest, within: within, inside: { inside[$0] }, dark: dark)
        (first, last) = (outFirst.end, outLast.end)
        let offImage = outFirst.offImage || outLast.offImage
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

    /// One line of `barEnds`: its samples less their mean, and their spread.
    struct Line {
        var values: [Double]
        var spread: Double
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
        // One line's samples, less their mean, and their spread (root mean square), each line made once; nil where
        // a sample would leave the image (a line that leaves it is not judged: its samples would repeat the image's
        // edge row). Lines are kept by their offset, -limit...limit.
        var lines = [Line?](repeating: nil, count: 2 * limit + 1)
        var made = [Bool](repeating: false, count: 2 * limit + 1)
        func line(_ d: Int) -> Line? {
            guard abs(d) <= limit else { return nil }
            if made[d + limit] { return lines[d + limit] }
            made[d + limit] = true
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
                    guard x >= 0, y >= 0, x <= Double(image.width), y <= Double(image.height) else { return nil }
                    values[k] = bilinear(image, x, y)
                }
            }
            let mean = values.reduce(0, +) / Double(count)
            var squares = 0.0
            for k in 0..<count {
                values[k] -= mean
                squares += values[k] * values[k]
            }
            let l = Line(values: values, spread: (squares / Double(count)).squareRoot())
            lines[d + limit] = l
            return l
        }
        // The strongest line within the reported box (ZBar decoded there), not past it: a neighbouring code
        // along the bars can have more contrast than this one. Every few lines first, then every line around
        // the best of those (the contrast is smooth along bars).
        // (Given: the strongest over the whole code, so that every window of one code starts on the same bars,
        // not one on a second label stacked against the first within ZBar's box.)
        let own = min(limit, max(1, Int(within.rounded(.up))))
        func strength(_ d: Int) -> Double { line(d)?.spread ?? 0 }
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
        func dot(_ a: [Double], _ b: [Double]) -> Double {
            var sum = 0.0
            for k in 0..<count { sum += a[k] * b[k] }
            return sum / Double(count)
        }
        func edge(_ step: Int) -> Double {
            guard var previous = line(strongest) else { return Double(strongest) }
            var anchor = previous
            var d = strongest
            var inside = full
            while abs(d + step) <= limit, let next = line(d + step) {
                let (sp, sn, sa) = (previous.spread, next.spread, anchor.spread)
                let carried = sp > 0 ? dot(previous.values, next.values) / sp : 0
                let alike = sn > 0 && sp > 0 ? carried / sn : 0
                let kin = sn > 0 && sa > 0 ? dot(anchor.values, next.values) / (sa * sn) : 0
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
}
