import Foundation

/// A run of bars along a scan line, walked from a point on it to a quiet zone at each end.
extension BarOutline {
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
        func walk(_ step: Int) -> (end: Int, offImage: Bool) {
            walkOut(
                from: start, step, quiet: Double(quiet), widest: widestBar, within: { abs($0) < reach },
                inside: { inside(at($0)) }, dark: dark)
        }
        let (from, fromOff) = walk(-1)
        let (to, toOff) = walk(1)
        let offImage = fromOff || toOff
        return (at(from), at(to + 1), offImage)
    }

    /// Outward from `edge` (a bar's last dark sample), `step` (+1 or -1) at a time while `within` holds: bar by bar
    /// while the light gap before the next bar is shorter than `quiet` samples, and never into a dark stretch longer
    /// than `widest` (no bar is that wide: past a label's edge the background would otherwise read as more bars).
    /// The last dark sample of the last bar taken, and whether the walk left the image (`inside` false) first.
    static func walkOut(
        from edge: Int, _ step: Int, quiet: Double, widest: Int, within: (Int) -> Bool, inside: (Int) -> Bool,
        dark: (Int) -> Bool
    ) -> (end: Int, offImage: Bool) {
        var end = edge  // the last dark sample of the last bar taken
        var pending = edge  // the same in the bar being crossed
        var k = edge + step
        var gap = 0.0
        var bar = 0
        while within(k), gap < quiet {
            guard inside(k) else { return (bar > 0 ? pending : end, true) }
            if dark(k) {
                bar += 1
                gap = 0
                if bar > widest { return (end, false) }
                pending = k
            } else {
                if bar > 0 { end = pending }
                gap += 1
                bar = 0
            }
            k += step
        }
        return (bar > 0 ? pending : end, false)
    }
}
