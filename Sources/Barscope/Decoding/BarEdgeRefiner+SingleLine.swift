import Foundation

/// A code read on one scan line: its span from the runs of bars through the hits, and whether it goes on past them.
extension BarEdgeRefiner {
    /// A code ZBar read on one scan line only, or on a few whose hits pile at one end of it: the hits say little
    /// of where the code runs. Along the scan line through the hit, the run of bars that holds it is found (bar by
    /// bar while the gaps stay shorter than a quiet zone), and along the lines 2 and 4 pixels to either side.
    ///
    /// - Parameters:
    ///   - whole: the read must come from a line that crossed the whole code. A line that enters or leaves a tilted
    ///     code through its bars' ends reads a part of it, which a variable-length symbology without a check
    ///     character (I2/5, CODE-39, Codabar) can take for a shorter valid code; the lines beside it, nearer the
    ///     code's middle, cross more of it. Where no line beside the hit's crosses a longer run of bars, the read
    ///     stands; where one does, `readEnds` decides. (A part is at least a character, 10 modules and more; 5 %
    ///     of the run or 4 px is what a whole code's runs differ by from line to line: its thin end bars are
    ///     sampled across a tilt, to the pixel.) Without `whole` (EAN and UPC, whose halves ZBar joins from
    ///     different lines; CODE-128 and CODE-93, whose check characters a part fails), the longest of these runs
    ///     is the code's extent.
    ///   - readEnds: where the read's own characters begin and end on the hit's line (ZBar's decoder run along it,
    ///     `ZBarLineDecoder`), asked only when a line beside is longer: the walk may have stopped short of the
    ///     code's end (a faint patch, blur where the line grazes the bars' ends) rather than at it. A part leaves
    ///     the code going on past one of its ends on a line beside it; a whole read reaches as far as they do,
    ///     and is then boxed on those ends. Without them such a read is dropped.
    /// - Returns: the run's two ends and the direction across the bars judged around it, or nil.
    static func singleLineSpan(
        hit: Point, scan: Point, whole: Bool, in image: LumaImage, readEnds: (() -> (Point, Point)?)? = nil
    ) -> (ends: [Point], across: Point)? {
        func length(_ r: (Point, Point, offImage: Bool)) -> Double {
            ((r.1.x - r.0.x) * (r.1.x - r.0.x) + (r.1.y - r.0.y) * (r.1.y - r.0.y)).squareRoot()
        }
        let normal = Point(-scan.y, scan.x)
        // The run of bars along the line through `p`: nil where that line shows none, or (`whole`) runs off the
        // image. A line that runs off the image before a quiet zone may be a cut code's; one that did across 8
        // modules of light may have crossed a quiet zone measured in over-wide modules, so 6 are tried before
        // giving up.
        func runOn(_ p: Point) -> (Point, Point, offImage: Bool)? {
            guard let wide = run(through: p, along: scan, quiet: 8, in: image),
                let line = wide.offImage ? run(through: p, along: scan, quiet: 6, in: image) : wide,
                !line.offImage || !whole, length(line) >= 8
            else { return nil }
            return line
        }
        // The hit's own line; where it shows no run of bars, the nearest line beside it (up to 4 px along the bars)
        // whose run reaches the hit. ZBar can read a code on its bars' last row, where blur leaves them too faint
        // to tell from the label's dark edge nearby (an I2/5 read by ZBar and the stock element, frame 16 of the
        // small scene's seed 46 at 1280x720, dropped here as a read whose extent could not be told).
        func reaches(_ r: (Point, Point, offImage: Bool)) -> Bool {
            func along(_ q: Point) -> Double { (q.x - hit.x) * scan.x + (q.y - hit.y) * scan.y }
            let (a, b) = (along(r.0), along(r.1))
            return min(a, b) <= 3 && max(a, b) >= -3
        }
        let lines = [0.0, -1, 1, -2, 2, -3, 3, -4, 4].lazy.compactMap {
            (d: Double) -> (Point, Point, offImage: Bool)? in
            guard let r = runOn(Point(hit.x + normal.x * d, hit.y + normal.y * d)) else { return nil }
            return d == 0 || reaches(r) ? r : nil
        }
        guard var line = lines.first else { return nil }
        // The longest run on the lines 2 and 4 px beside `line`, where longer than it by more than the line-to-line
        // difference. (A line beside it that runs off the image says nothing: the background past the edge is
        // unknown.)
        func middle(_ r: (Point, Point, offImage: Bool)) -> Point { r.0.halfway(to: r.1) }
        func longerBeside(_ line: (Point, Point, offImage: Bool)) -> (Point, Point, offImage: Bool)? {
            let crossed = length(line)
            let mid = middle(line)
            var longest: (Point, Point, offImage: Bool)? = nil
            for d in [-4.0, -2.0, 2.0, 4.0] {
                let beside = Point(mid.x + normal.x * d, mid.y + normal.y * d)
                guard let other = run(through: beside, along: scan, quiet: 8, in: image), !other.offImage,
                    length(other) > crossed + max(4, crossed / 20), length(other) > longest.map(length) ?? 0
                else { continue }
                longest = other
            }
            return longest
        }
        if let other = longerBeside(line) {
            if !whole {
                // The longest run is the code's extent.
                line = other
            } else {
                // Shorter than a line beside it: a part, or a walk that stopped short of the code's end. The
                // read's own ends tell (`readEnds`), judged beside them and beside the walked line (the hit's own or
                // one up to 4 px from it). (CODE-39 of 1.1-1.4 px modules read whole by ZBar on lines grazing its
                // first bars' ends, walked 6-13 px short; I2/5 of 1.25 px modules walked 26 px of 71: seeds 63, 66,
                // 74, 75 and 85.)
                guard let ends = readEnds?(), !continuesPast(ends, along: scan, alsoBeside: [middle(line)], in: image)
                else { return nil }
                line = (ends.0, ends.1, false)
            }
        }
        let across = acrossBars(in: image, around: Bounds(enclosing: [line.0, line.1])) ?? scan
        return ([line.0, line.1], across)
    }

    /// Whether a 1D code goes on past a read's ends (on one scan line, along `scan`): a run of bars on a line 2 or
    /// 4 px beside the read's middle (or beside one of `alsoBeside`) reaches past either end by more than the
    /// line-to-line difference (4 px or 5 % of the read) and the bars' lean (a line d px beside crosses bars that lean
    /// by θ from the line's normal d·tanθ further along). A read of a part stops inside the code, and the code
    /// continues on the lines beside it. (Not whether such a line is longer: across a tilted code the lines beside
    /// are cut by the bars' ends too, and a part of 124 px had a line beside it of 130 px that began 11 px before
    /// it.) The read's own line, walked the same way, counts as part of the read: a run beside that bridges the same
    /// gap (to a label's edge or a neighbour within a quiet zone of the walk's) says nothing.
    static func continuesPast(
        _ ends: (Point, Point), along scan: Point, alsoBeside extra: [Point] = [], in image: LumaImage
    ) -> Bool {
        var (a, b) = (min(ends.0.dot(scan), ends.1.dot(scan)), max(ends.0.dot(scan), ends.1.dot(scan)))
        let tolerance = max(4, (b - a) / 20)
        let middle = ends.0.halfway(to: ends.1)
        if let own = run(through: middle, along: scan, quiet: 8, in: image), !own.offImage {
            a = min(a, own.0.dot(scan), own.1.dot(scan))
            b = max(b, own.0.dot(scan), own.1.dot(scan))
        }
        let normal = Point(-scan.y, scan.x)
        // tanθ, judged only once a run beside goes past the plain tolerance (the direction across the bars is a
        // structure tensor over the read's area).
        var judgedLean: Double? = nil
        func lean() -> Double {
            if let judgedLean { return judgedLean }
            let across = acrossBars(in: image, around: Bounds(enclosing: [ends.0, ends.1])) ?? scan
            let cosine = max(0.5, abs(across.dot(scan)))
            let tangent = (1 - cosine * cosine).squareRoot() / cosine
            judgedLean = tangent
            return tangent
        }
        return ([middle] + extra).contains { m in
            [-4.0, -2.0, 2.0, 4.0].contains { d in
                guard
                    let other = run(
                        through: Point(m.x + normal.x * d, m.y + normal.y * d), along: scan, quiet: 8, in: image),
                    !other.offImage
                else { return false }
                let past = max(
                    a - min(other.0.dot(scan), other.1.dot(scan)), max(other.0.dot(scan), other.1.dot(scan)) - b)
                return past > tolerance && past > tolerance + abs(d) * lean()
            }
        }
    }

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
