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
    var cells: [CellTensor] = []
    var marks: [Mark] = []
    var histogram = [Int](repeating: 0, count: HardCodeReader.histogramBins)
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
