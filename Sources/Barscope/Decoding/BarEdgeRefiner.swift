/// Snaps the ends of a 1D code's box to its outermost bars.
///
/// ZBar reports a linear code's location as points where scan lines finished decoding, which can sit a module or
/// two inside the first or last bar (6 px on CODE-128 at 3 px modules). Along a few lines across the bars, this
/// finds the outermost dark pixel near each end, within a window well short of the quiet zone, and moves the box
/// ends there.
enum BarEdgeRefiner {
    /// - Parameters:
    ///   - corners: the box in image coordinates, TL, BL, BR, TR order as `OrientedBox` gives it.
    ///   - alongX: true when the bars follow one another along the image's x axis (ZBar orientation up/down).
    static func refine(_ corners: [Point], in image: LumaImage, alongX: Bool) -> [Point] {
        guard corners.count == 4 else { return corners }
        // Name the box by its two axes: u runs across the bars (bar sequence), v along them.
        // Corners are c0..c3 in order around the box; pick the edge pair whose direction best matches u.
        let e01 = corners[1] - corners[0], e03 = corners[3] - corners[0]
        let uDir = alongX ? Point(1, 0) : Point(0, 1)
        func alignment(_ e: Point) -> Double {
            let len = (e.x * e.x + e.y * e.y).squareRoot()
            return len == 0 ? 0 : abs(e.x * uDir.x + e.y * uDir.y) / len
        }
        // origin + s*u + r*v spans the box, s, r in 0...1.
        let (u, v) = alignment(e03) >= alignment(e01) ? (e03, e01) : (e01, e03)
        let origin = corners[0]
        let length = (u.x * u.x + u.y * u.y).squareRoot()
        guard length >= 8 else { return corners }
        let unit = Point(u.x / length, u.y / length)
        let window = max(3.0, 0.04 * length)

        var startShifts: [Double] = []
        var endShifts: [Double] = []
        for r in [0.25, 0.5, 0.75] {
            let base = Point(origin.x + v.x * r, origin.y + v.y * r)
            // Samples from `window` before the start to `window` past the end, one per pixel along u.
            let from = -window, to = length + window
            let count = Int(to - from) + 1
            var samples = [UInt8](repeating: 0, count: count)
            for k in 0..<count {
                let t = from + Double(k)
                samples[k] = luma(image, base.x + unit.x * t, base.y + unit.y * t)
            }
            guard let lo = samples.min(), let hi = samples.max(), Int(hi) - Int(lo) >= 40 else { continue }
            let threshold = (Int(lo) + Int(hi)) / 2
            let w = Int(window)
            // Start: the first dark sample within the window around the reported start.
            if let k = (0...(2 * w)).first(where: { $0 < count && Int(samples[$0]) < threshold }) {
                startShifts.append(from + Double(k))
            }
            // End: the last dark sample within the window around the reported end (+1: its far edge).
            let endIndex = count - 1
            if let k = stride(from: endIndex, through: max(0, endIndex - 2 * w), by: -1).first(where: {
                Int(samples[$0]) < threshold
            }) {
                endShifts.append(from + Double(k) + 1 - length)
            }
        }
        guard !startShifts.isEmpty, !endShifts.isEmpty else { return corners }
        let s0 = median(startShifts), s1 = median(endShifts)
        func at(_ s: Double, _ r: Double) -> Point {
            Point(origin.x + unit.x * s + v.x * r, origin.y + unit.y * s + v.y * r)
        }
        let refined = [at(s0, 0), at(s0, 1), at(length + s1, 1), at(length + s1, 0)]
        return OrientedBox.normalizedOrder(refined)
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
