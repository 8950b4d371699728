import Foundation

/// Reads 1D codes too small, blurred, faint or noisy for ZBar on the frame, at its size or twice it.
///
/// ZBar reads one scan line at a time: a line across bars of 1-2 px that a blur has left a few grey levels apart,
/// under noise of as many, has no edges left for it to find. But the bars run on for 20 or more lines, and every one
/// of those lines is another look at the same bars. This reader
/// 1. finds where the frame has many parallel edges (the structure tensor of 8-px cells: strong, and all one way),
///    where no code has been read, and keeps the regions with many edges across them (a line or a border has few);
/// 2. averages the image along the bars into one profile across them, at a quarter pixel (bilinear), at the angle
///    that makes the profile sharpest: the noise falls with the square root of the bars' height, and the tilt is
///    undone;
/// 3. undoes some of the blur (unsharp masks), stretches the profile over 0...255 with white quiet zones past the
///    bars, and gives ZBar each version as a small image of identical rows: edges 4 samples apart where the frame
///    had 1 px;
/// 4. in a stream (with a `HardCodeMemory`), when nothing this profile reads is believed, reads it again averaged
///    with the same bars' profiles in the frames before, whose noise was their own.
/// A read is kept when it covers the bars, and when its symbology's check is strong (CODE-128, CODE-93), two
/// versions give the same text, or an earlier frame of the same bars read it too (EAN/UPC's one check digit, and
/// I2/5, CODE-39 and Codabar with none: one noisy profile can read as another valid text); a region where two texts
/// stand gives none.
///
/// Not thread-safe (its ZBar scanner and buffers): one per worker, like `BarcodeReader`.
final class HardCodeReader {
    private let zbar: ZBarScanner
    /// The stream's earlier frames, for profiles averaged over them (nil: each image alone).
    private let memory: HardCodeMemory?
    /// Tensor sums per cell, each cell's state in the search for regions, the energies' histogram and the
    /// profile image: kept from one frame to the next (no allocation per frame).
    private var cells: [CellTensor] = []
    private var marks: [Mark] = []
    private var histogram = [Int](repeating: 0, count: HardCodeReader.histogramBins)
    private var row: [UInt8] = []

    /// The most candidate regions read in one image (the strongest first): bounds the cost on a frame full of
    /// texture.
    var maximumCandidates = 40

    init(settings: ScannerSettings, memory: HardCodeMemory? = nil) {
        self.memory = memory
        zbar = ZBarScanner(settings: settings)
        zbar.setKinds(.linear)
        zbar.setDensity(rows: 1, columns: 0)
    }

    /// Reads the hard 1D codes of `image` away from `known` (reads already made, in the image's pixels). `frame`,
    /// the image's number in its stream, lets the memory average each code's profile over the frames before;
    /// `origin`, where the image lies in the frame (a viewfinder's crop), keeps the memory's places in the frame's
    /// pixels while the crop moves.
    func read(_ image: LumaImage, excluding known: [Detection], frame: Int? = nil, origin: Point = Point(0, 0))
        -> [Detection]
    {
        let frame = frame.flatMap { $0 >= 0 ? $0 : nil }
        let candidates = findBars(in: image).filter { c in
            !known.contains { $0.bounds.expanded(by: 8).contains(c.center) }
        }
        var out: [Detection] = []
        for c in candidates.prefix(maximumCandidates) {
            // Two candidates on one code (a code split by a faint stretch) give one read.
            if out.contains(where: { $0.bounds.expanded(by: 8).contains(c.center) }) { continue }
            if let d = read(c, in: image, frame: frame, origin: origin) { out.append(d) }
        }
        return out
    }

    // MARK: - Where the bars are

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

    // MARK: - The profile across the bars

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

    /// Reads one candidate: the angle refined, the bars' height trimmed, the profile's versions given to ZBar.
    private func read(_ c: Candidate, in image: LumaImage, frame: Int?, origin: Point) -> Detection? {
        // (The profile's samples run from `t.lowerBound`, `oversample` to the pixel; the version images add `pad`.)
        let t = (-c.halfLength - Self.margin)...(c.halfLength + Self.margin)
        let inner = (-c.halfLength)...(c.halfLength)
        let s = (-c.halfHeight + 2)...(c.halfHeight - 2)
        guard s.upperBound > s.lowerBound else { return nil }
        // A code has many edges across it; a line of the background, a border or a letter, few.
        let coarse = Self.profile(image, center: c.center, across: c.across, t: inner, s: s, step: 0.5, rowStep: 2)
        guard Self.edges(coarse, window: 8).count >= Self.fewestEdges else { return nil }
        // The angle: the tensor's, then whichever makes the profile sharpest, within ±3° in 1° steps, then
        // half a degree either side of the best.
        var best = (score: -1.0, angle: atan2(c.across.y, c.across.x))
        let degree = Double.pi / 180
        func consider(_ angle: Double) {
            let across = Point(cos(angle), sin(angle))
            let p = Self.profile(image, center: c.center, across: across, t: inner, s: s, step: 0.5, rowStep: 2)
            let score = Self.sharpness(p, lag: 2)
            if score > best.score { best = (score, angle) }
        }
        let tensor = best.angle
        for k in -3...3 { consider(tensor + Double(k) * degree) }
        let coarseBest = best.angle
        for k in [-1.0, 1.0] { consider(coarseBest + k * 0.5 * degree) }
        let across = Point(cos(best.angle), sin(best.angle))
        // The bars' height: the rows whose own profile varies as the code does (the region's cells reach past the
        // bars' ends into the card or the background).
        // The cells at the bars' ends may not have passed (half bar, half card): looked for a little past them.
        let height = Self.barRows(
            image, center: c.center, across: across, t: inner, s: (s.lowerBound - 6)...(s.upperBound + 6))
        let profile = Self.profile(
            image, center: c.center, across: across, t: t, s: height, step: 1 / Self.oversample, rowStep: 1)
        // This frame's profile, else the average of this code's profiles over the frames before (its noise falls).
        guard let own = Self.bars(of: profile) else { return nil }
        let sighting = frame.flatMap {
            memory?.sighting(profile, frame: $0, center: c.center + origin, across: across, start: t.lowerBound)
        }
        let earlier = sighting?.texts ?? [:]
        let mine = versionReads(profile, span: own)
        var chosen = Self.believed(mine, earlier: earlier)
        var used = profile
        var span = own
        if chosen == nil, let average = sighting?.average,
            let averageSpan = Self.bars(of: average)
        {
            // The average's span, and this frame's, both to be explained.
            let both = min(own.lowerBound, averageSpan.lowerBound)...max(own.upperBound, averageSpan.upperBound)
            chosen = Self.believed(versionReads(average, span: both), earlier: earlier)
            used = average
            span = averageSpan
        }
        // What this frame's own profile read counts for the frames after it, believed or not yet (the average's
        // reads do not: it is mostly the frames before, and would confirm itself).
        if let sighting { memory?.vote(sighting.trace, Set(mine.keys), believed: chosen?.0) }
        guard let (text, versions) = chosen else { return nil }
        let along = Point(-across.y, across.x)
        // The ends: the outermost edges of the bars (ZBar's hits lie inside them, at the first and last
        // characters it decoded).
        let ends = Self.outerEdges(used, bars: span)
        let t0 = t.lowerBound + ends.lowerBound / Self.oversample
        let t1 = t.lowerBound + ends.upperBound / Self.oversample
        func place(_ tt: Double, _ ss: Double) -> Point {
            Point(c.center.x + tt * across.x + ss * along.x, c.center.y + tt * across.y + ss * along.y)
        }
        // Corners top-left, bottom-left, bottom-right, top-right when the bars stand upright.
        let (a, b) = across.x >= 0 ? (t0, t1) : (t1, t0)
        let (top, bottom) =
            across.x >= 0 ? (height.lowerBound, height.upperBound) : (height.upperBound, height.lowerBound)
        let corners = [place(a, top), place(a, bottom), place(b, bottom), place(b, top)]
        var d = Detection(type: text.type, data: text.data, quality: versions, polygon: corners)
        d.lengthAcrossBars = t1 - t0
        d.acrossBars = across
        return d
    }

    /// A read's type and text.
    struct Text: Hashable {
        let type: String
        let data: String
    }

    /// The samples a profile at `oversample` spans with bars (edges within a running mean of 4 px).
    static func bars(of profile: [Float]) -> ClosedRange<Int>? {
        barSpan(edges(profile, window: 4 * Int(oversample)))
    }

    /// The texts a profile's versions read, with how many versions read each. `span`: the samples of the bars
    /// (a read must cover most of them: one that covers only part read a part, an I2/5 inside a longer one, or
    /// misread).
    private func versionReads(_ profile: [Float], span: ClosedRange<Int>) -> [Text: Int] {
        var reads: [Text: Int] = [:]
        let spanned = Double(span.upperBound - span.lowerBound)
        for (sigma, amount) in Self.versions {
            let version = Self.sharpened(profile, sigma: sigma * Self.oversample, amount: amount, bars: span)
            for r in scan(version) where r.xRange.upperBound - r.xRange.lowerBound >= Self.explained * spanned {
                reads[Text(type: r.type, data: r.data), default: 0] += 1
            }
        }
        return reads
    }

    /// The one text believed of a region's reads: a symbology with a strong check on one version, the others on
    /// two, or on one when an earlier frame of the same bars read it too. Two texts believed in one frame: one of
    /// them is wrong, and nothing says which.
    static func believed(_ reads: [Text: Int], earlier: [Text: Int]) -> (Text, versions: Int)? {
        let texts = reads.filter { checksItself($0.key.type) || $0.value >= 2 || earlier[$0.key, default: 0] >= 1 }
        guard texts.count == 1, let (text, versions) = texts.first else { return nil }
        return (text, versions)
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

    /// The least share of the bars' span a read's hits must cover.
    static let explained = 0.85

    /// Samples of the profile's end value added at either end: ZBar wants its quiet zone.
    static let pad = 32
    /// Rows of each version's image: ZBar wants a Codabar read on more than three lines (on three it reports none).
    static let rows = 6

    /// ZBar's reads of one version of the profile, drawn as `rows` identical rows.
    private func scan(_ version: [UInt8]) -> [ZBarScanner.ProfileRead] {
        let width = version.count + 2 * Self.pad
        if row.count < width * Self.rows { row = [UInt8](repeating: 0, count: width * Self.rows) }
        return row.withUnsafeMutableBufferPointer { buffer -> [ZBarScanner.ProfileRead] in
            let base = buffer.baseAddress!
            for r in 0..<Self.rows {
                let line = base + r * width
                line.update(repeating: version.first!, count: Self.pad)
                for (i, v) in version.enumerated() { line[Self.pad + i] = v }
                (line + Self.pad + version.count).update(repeating: version.last!, count: Self.pad)
            }
            return zbar.profileReads(
                LumaImage(base: UnsafeRawPointer(base), width: width, height: Self.rows, stride: width))
        }
    }

    /// Symbologies whose check a random misread passes too seldom to matter (CODE-128's modulo 103, CODE-93's two
    /// modulo-47 characters): one read of one version is enough. EAN and UPC have one decimal check digit (a
    /// misread passes it one time in ten: measured, one UPC-E in the small scene) and need two, like the rest.
    static func checksItself(_ type: String) -> Bool {
        switch type {
        case "CODE-128", "CODE-93": return true
        default: return false
        }
    }
}
