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
}
