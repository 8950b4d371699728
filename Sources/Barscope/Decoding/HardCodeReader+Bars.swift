import Foundation

/// Where the bars are: cells of strong edges all one way (the structure tensor), joined into candidate regions.
extension HardCodeReader {
    /// A patch that looks like the bars of a 1D code.
    struct Candidate {
        var center: Point
        /// Unit vector across the bars (the edges' gradient).
        var across: Point
        /// From the centre to either end across the bars, and along them.
        var halfLength: Double
        var halfHeight: Double
        var strength: Double
    }

    struct CellTensor {
        var xx: Int32 = 0
        var yy: Int32 = 0
        var xy: Int32 = 0
        var energy: Int32 { xx + yy }
    }

    static let cell = 8

    /// A cell in the search for regions: too weak or not all one way, strong and not yet in a region, or taken.
    enum Mark: UInt8 {
        case weak, strong, taken
    }

    /// The energies' histogram, for the median: bins of 16, the last one holding everything above.
    static let histogramBins = 1024

    /// Cells whose gradients are strong and all one way, joined into regions of one direction.
    func findBars(in image: LumaImage) -> [Candidate] {
        let n = Self.cell
        let gw = (image.width - 2) / n
        let gh = (image.height - 2) / n
        guard gw >= 3, gh >= 1 else { return [] }
        let count = gw * gh
        if cells.count < count {
            cells = [CellTensor](repeating: CellTensor(), count: count)
            marks = [Mark](repeating: .weak, count: count)
        }
        let src = image.base.assumingMemoryBound(to: UInt8.self)
        let stride = image.stride
        // Every other row of each cell: half the work, the same direction (bars run on for many rows; every
        // fourth row read 43 % fewer hard codes).
        for cy in 0..<gh {
            for cx in 0..<gw {
                var t = CellTensor()
                var y = 1 + cy * n
                while y < 1 + (cy + 1) * n {
                    let p = src + y * stride + 1 + cx * n
                    for x in 0..<n {
                        let gx = Int32(p[x + 1]) - Int32(p[x - 1])
                        let gy = Int32(p[x + stride]) - Int32(p[x - stride])
                        t.xx += gx * gx
                        t.yy += gy * gy
                        t.xy += gx * gy
                    }
                    y += 2
                }
                cells[cy * gw + cx] = t
            }
        }
        // The image's own texture sets the bar: most cells are background, so the median is its noise (from a
        // histogram: no sort of every cell's energy per frame; a frame whose median passes the last bin is all
        // texture, and its bar stays at six times that bin).
        for b in histogram.indices { histogram[b] = 0 }
        for i in 0..<count { histogram[min(Self.histogramBins - 1, Int(cells[i].energy) / 16)] += 1 }
        var below = 0
        var median = Self.histogramBins - 1
        for (b, k) in histogram.enumerated() {
            below += k
            if 2 * below > count {
                median = b
                break
            }
        }
        let floor = max(Int32(4 * n * n / 2), Int32(6 * (16 * median + 8)))
        for i in 0..<count {
            let t = cells[i]
            let e = t.energy
            // Coherence: 1 for edges all one way, 0 for none preferred.
            let d = Double(t.xx - t.yy)
            let strong = e > floor && (d * d + 4 * Double(t.xy) * Double(t.xy)).squareRoot() / Double(e) > 0.55
            marks[i] = strong ? .strong : .weak
        }
        func direction(_ t: CellTensor) -> (Double, Double) {
            // The doubled angle's vector: directions θ and θ+π are the same.
            let d = Double(t.xx - t.yy)
            let m = max(1e-9, (d * d + 4 * Double(t.xy) * Double(t.xy)).squareRoot())
            return (d / m, 2 * Double(t.xy) / m)
        }
        var out: [Candidate] = []
        var stack: [Int] = []
        for start in 0..<count where marks[start] == .strong {
            marks[start] = .taken
            stack = [start]
            var members: [Int] = []
            let seed = direction(cells[start])
            while let i = stack.popLast() {
                members.append(i)
                let x = i % gw
                let y = i / gw
                for dy in -1...1 {
                    for dx in -1...1 {
                        let nx = x + dx
                        let ny = y + dy
                        guard nx >= 0, ny >= 0, nx < gw, ny < gh else { continue }
                        let j = ny * gw + nx
                        guard marks[j] == .strong else { continue }
                        // Within about 20 degrees of the first cell's direction (cos 40° on the doubled angle).
                        let d = direction(cells[j])
                        guard d.0 * seed.0 + d.1 * seed.1 > 0.77 else { continue }
                        marks[j] = .taken
                        stack.append(j)
                    }
                }
            }
            guard members.count >= 4 else { continue }
            // In Double: a large, strongly textured region's sums pass Int32 (a frame of stripes has 2 million a cell).
            var xx = 0.0
            var yy = 0.0
            var xy = 0.0
            for i in members {
                xx += Double(cells[i].xx)
                yy += Double(cells[i].yy)
                xy += Double(cells[i].xy)
            }
            let energy = xx + yy
            let theta = 0.5 * atan2(2 * xy, xx - yy)
            let across = Point(cos(theta), sin(theta))
            let along = Point(-across.y, across.x)
            // The region's centre and extent in cell centres, in pixels.
            var cx = 0.0
            var cy = 0.0
            for i in members {
                cx += Double(1 + (i % gw) * n) + Double(n) / 2
                cy += Double(1 + (i / gw) * n) + Double(n) / 2
            }
            cx /= Double(members.count)
            cy /= Double(members.count)
            var ts: [Double] = []
            var ss: [Double] = []
            for i in members {
                let px = Double(1 + (i % gw) * n) + Double(n) / 2 - cx
                let py = Double(1 + (i / gw) * n) + Double(n) / 2 - cy
                ts.append(px * across.x + py * across.y)
                ss.append(px * along.x + py * along.y)
            }
            let t0 = ts.min()! - Double(n) / 2
            let t1 = ts.max()! + Double(n) / 2
            let s0 = ss.min()! - Double(n) / 2
            let s1 = ss.max()! + Double(n) / 2
            // A code has at least a few dozen modules across its bars: a single line or edge is a cell or two.
            guard t1 - t0 >= 4 * Double(n) else { continue }
            let mid = Point(
                cx + across.x * (t0 + t1) / 2 + along.x * (s0 + s1) / 2,
                cy + across.y * (t0 + t1) / 2 + along.y * (s0 + s1) / 2)
            out.append(
                Candidate(
                    center: mid, across: across, halfLength: (t1 - t0) / 2, halfHeight: (s1 - s0) / 2,
                    strength: energy))
        }
        return out.sorted { $0.strength > $1.strength }
    }
}
