import Foundation

/// A code where a search saw it, moved to where it should be now when its velocity is known.
struct Expected: Sendable {
    var detection: Detection
    var hasVelocity: Bool
    /// Frames since the code was last seen (the prediction's age: the region grows with it).
    var framesSince: Int = 1
    /// Pixels a frame, when the velocity is known.
    var speed: Double = 0
}

/// Tracked mode's cheap rescans: only the neighbourhood of the codes seen a moment ago is scanned, each region
/// grown enough to catch the code where it has moved since.
enum TrackedRegions {
    /// The most lines a sparse rescan reads across an axis-aligned 1D code (every 4th line when that is fewer).
    static let sparseLines = 12

    /// A rescan's first pass over `area`: every n-th row and column (0 = none). A 1D code lying along an axis is read
    /// along it only, every 4th line but at most `sparseLines`; a 2D or tilted code both ways, every other line.
    static func sparseDensity(for code: Detection, over area: PixelRect) -> (rows: Int, columns: Int) {
        if let u = code.acrossBars, abs(u.x) > 0.97 { return (max(4, area.height / sparseLines), 0) }
        if let u = code.acrossBars, abs(u.y) > 0.97 { return (0, max(4, area.width / sparseLines)) }
        return (2, 2)
    }

    /// Reads of a region that is not the viewfinder, judged by the viewfinder's own edges as a full scan judges them:
    /// `inViewfinder` set, a 1D read cut by its edge dropped. (No viewfinder: as they are.)
    static func judged(_ reads: [Detection], by viewfinder: PixelRect?) -> [Detection] {
        guard let viewfinder else { return reads }
        return reads.compactMap { d in
            var d = d
            d.inViewfinder = viewfinder.contains(all: d.polygon)
            return Plausibility.cutByCrop(d, crop: viewfinder) ? nil : d
        }
    }

    /// Scans the regions around `known` (full-frame pixels) in the cropped luma image.
    /// - Parameters:
    ///   - mapping: crop → full frame (the viewfinder's offset).
    ///   - viewfinder: judges `inViewfinder`, as a full scan does.
    ///   - everyLine: a code the sparse lines miss is looked for again on every line (false: sparse lines only).
    static func rescan(
        _ luma: LumaImage, around known: [Expected], mapping: CropMapping,
        viewfinder: PixelRect?, with scanner: BarcodeReader, everyLine: Bool = true
    ) -> [Detection] {
        rescanUnlessCut(
            luma, around: known, mapping: mapping, viewfinder: viewfinder, with: scanner, cuts: false,
            everyLine: everyLine
        ).found
    }

    /// A frame that lost at once every code of two or more seen a frame or two before, none of them found where it
    /// should be (sparse lines for all, then every line, largest first, until two are missing there too): a cut, a
    /// camera turned, a clip played again from its start, the view blocked. Rescanning around where the codes were,
    /// ever wider and every line for the frames until they are forgotten, cannot find codes that went elsewhere, and
    /// costs most when every stream of a site sees the same jump at once (a clip served to several streams: heavy
    /// frames on every worker; docs/decisions.md); the caller forgets them instead, and the next search or the
    /// changed areas between searches find what came.
    static func rescanUnlessCut(
        _ luma: LumaImage, around known: [Expected], mapping: CropMapping,
        viewfinder: PixelRect?, with scanner: BarcodeReader, cuts: Bool = true, everyLine: Bool = true
    ) -> (found: [Detection], cut: Bool) {
        var found: [Detection] = []
        var scratch: [UInt8] = []
        defer { scanner.zbarScanner.setDensity(1) }
        func scan(_ area: PixelRect, for code: Detection, density: (rows: Int, columns: Int)) -> Bool {
            guard let part = luma.cropped(to: area) else { return false }
            let offset = CropMapping(offsetX: mapping.offsetX + area.x, offsetY: mapping.offsetY + area.y)
            scanner.zbarScanner.setDensity(rows: density.rows, columns: density.columns)
            // A compact copy: ZBar's QR stage binarizes the image's whole stride × height, not just the crop.
            // The region is not the viewfinder: only the viewfinder's own edges judge a cut code (below).
            var got = part.compactCopy(into: &scratch) {
                scanner.read($0, mapping: offset, viewfinder: nil, readAgainIfEmpty: false)
            }
            got = judged(got, by: viewfinder)
            // A read whose box is far smaller than the code it should be (ZBar sometimes reports a 1D code
            // from a handful of lines or one half) is not trusted in a rescan; the next search reads it whole.
            let expectedArea = Double(code.bounds.width * code.bounds.height)
            let trusted = got.filter { Double($0.bounds.width * $0.bounds.height) >= 0.5 * expectedArea }
            for d in trusted
            where !found.contains(where: {
                $0.data == d.data && $0.type == d.type && $0.bounds.intersects(d.bounds)
            }) {
                found.append(d)
            }
            return trusted.contains(where: { $0.data == code.data && $0.type == code.type })
        }
        let areas = regions(around: known, mapping: mapping, bounds: luma)
        // Sparse lines first, for every code (`sparseDensity`). A 1D code's box ends and bar ends are found from the
        // image, not from the lines, so a tall code needs no more than `sparseLines` of them (its 50-70 lines each
        // decoded the same text: a quarter of a demo stream's rescan time).
        var seen = zip(known, areas).map { expected, area in
            scan(area, for: expected.detection, density: sparseDensity(for: expected.detection, over: area))
        }
        guard everyLine else { return (found, false) }
        let recent = known.reduce(0) { $0 + ($1.framesSince <= 2 ? 1 : 0) } >= 2
        // Not found that way: every line, both ways, once more, the largest codes (the surest reads) first. When
        // the sparse lines found nothing and two codes seen a frame or two before are missing on every line too,
        // it is a cut, told without the rest of the pass (which cost every stream that saw a clip's loop at once a
        // heavy frame; docs/decisions.md).
        var missingEverywhere = 0
        let largestFirst = known.indices.filter { !seen[$0] }.sorted {
            known[$0].detection.bounds.width * known[$0].detection.bounds.height
                > known[$1].detection.bounds.width * known[$1].detection.bounds.height
        }
        for i in largestFirst {
            seen[i] = scan(areas[i], for: known[i].detection, density: (1, 1))
            if !seen[i], known[i].framesSince <= 2 { missingEverywhere += 1 }
            if cuts, found.isEmpty, recent, missingEverywhere >= 2 { return ([], true) }
        }
        if cuts, found.isEmpty, recent { return ([], true) }
        for (i, (expected, area)) in zip(known, areas).enumerated() where !seen[i] {
            // Not where its velocity puts it (it turned, bounced, or sped up): as far as it could have gone in
            // any direction since it was seen, every line, once.
            if expected.hasVelocity, expected.framesSince > 0,
                let wide = widened(expected, mapping: mapping, bounds: luma), wide != area
            {
                seen[i] = scan(wide, for: expected.detection, density: (1, 1))
            }
        }
        // Still not read: where it should be, as a known code (turned along ZBar's rows, binarized, then by
        // zxing-cpp; only its own text counts), as the frames of an untracked run look at what the frames before
        // them read. A blurred frame of a code that stays in view keeps its track's reads.
        let lost = known.indices.filter { !seen[$0] }.map { i in
            KnownCodes.Code(
                type: known[i].detection.type, data: known[i].detection.data, polygon: known[i].detection.polygon,
                sequence: 0)
        }
        // (The looks set ZBar's lines themselves.)
        if !lost.isEmpty {
            found = scanner.withKnownCodes(lost, missingFrom: found, in: luma, mapping: mapping, viewfinder: viewfinder)
        }
        return (found, false)
    }

    /// The region a code with a known speed can have reached in any direction since it was seen: its predicted
    /// bounds grown by twice its travel (a reversal puts it that far from the prediction) plus the usual margin,
    /// in crop coordinates, clipped to the image.
    static func widened(_ e: Expected, mapping: CropMapping, bounds image: LumaImage) -> PixelRect? {
        let b = e.detection.bounds
        let size = min(b.width, b.height)
        let grow = max(12, size / 8) + Int(2 * e.speed * Double(e.framesSince)) + 2 * e.framesSince
        let x0 = max(0, b.x - mapping.offsetX - grow)
        let y0 = max(0, b.y - mapping.offsetY - grow)
        let x1 = min(image.width, b.x - mapping.offsetX + b.width + grow)
        let y1 = min(image.height, b.y - mapping.offsetY + b.height + grow)
        guard x1 > x0, y1 > y0 else { return nil }
        return PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    /// Each known code's bounds, in crop coordinates, grown by half its smaller side (at least 24 px) plus a tenth
    /// of it for every frame since it was seen, clipped to the image, one region per code (same order).
    /// (The smaller side: a long 1D code does not move further than a square one.)
    static func regions(around known: [Expected], mapping: CropMapping, bounds image: LumaImage) -> [PixelRect] {
        known.map { e in
            let b = e.detection.bounds
            let size = min(b.width, b.height)
            // Half the code each side, plus a margin per frame for what the velocity estimate misses (a quarter of
            // the code per frame when there is no estimate yet, after the first search).
            // Known velocity: the prediction is off by little more than the code's own jitter, a pixel or two a
            // frame plus an eighth of the code. Unknown (seen once): half the code, and a quarter per frame.
            let grow =
                e.hasVelocity
                ? max(12, size / 8) + Int(e.speed * 0.5 * Double(e.framesSince)) + 2 * e.framesSince
                : max(24, size / 2) + size / 4 * max(0, e.framesSince - 1)
            let x0 = max(0, b.x - mapping.offsetX - grow)
            let y0 = max(0, b.y - mapping.offsetY - grow)
            let x1 = min(image.width, b.x - mapping.offsetX + b.width + grow)
            let y1 = min(image.height, b.y - mapping.offsetY + b.height + grow)
            return PixelRect(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
        }
    }
}

/// Tracked mode's memory of where each code was last seen, fed by every scanned frame (full searches find new
/// codes, rescans follow known ones), for the frames that rescan around them.
///
/// Frames are scanned by several workers at once, so a frame's prediction uses whatever earlier frames have
/// finished: each code is moved by its own velocity for the frames since it was last seen. Only before the first
/// search has finished does a rescan wait (at most 5 s, or until `end`); a search is always handed to a worker
/// before the frames after it, so that cannot deadlock.
final class SearchBoard: @unchecked Sendable {
    // Sendable: every field is guarded by `condition`.
    private let condition = CountedCondition()
    private struct Sighting {
        var sequence: Int
        var detection: Detection
        /// The sighting before, for the velocity.
        var previous: (sequence: Int, center: Point)?
    }
    private var codes: [Sighting] = []
    private var searched = false
    /// Each recent search's results, once published (kept for `resultsKept` frames after the newest).
    private var searchResults: [Int: [Detection]] = [:]
    private static let resultsKept = 64
    /// Frames rescanned while the search before them was still running, held until it publishes.
    private var held: [Int: [Held]] = [:]
    private var ended = false
    /// A code not seen for this many frames is forgotten (the next search finds it again if it is there).
    private let forgetAfter: Int

    init(forgetAfter: Int = 8) { self.forgetAfter = forgetAfter }

    /// One frame's results (`search`: a full search, which may add codes; a rescan only updates known ones).
    /// - Returns: the results of the search on frame `resultOf`, if it has published them (a frame between
    ///   searches asks in the same hold of the lock).
    @discardableResult
    func publish(_ sequence: Int, _ detections: [Detection], search: Bool, resultOf: Int? = nil) -> [Detection]? {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        if search { searched = true }
        for d in detections {
            // The same code: same type and text, nearest to where it was.
            let match = codes.indices.filter {
                codes[$0].detection.type == d.type && codes[$0].detection.data == d.data
            }
            .min {
                codes[$0].detection.center.distance(to: d.center) < codes[$1].detection.center.distance(to: d.center)
            }
            if let i = match {
                guard sequence > codes[i].sequence else { continue }  // a late worker's older frame
                codes[i] = Sighting(
                    sequence: sequence, detection: d, previous: (codes[i].sequence, codes[i].detection.center))
            } else if search {
                codes.append(Sighting(sequence: sequence, detection: d, previous: nil))
            }
        }
        codes.removeAll { sequence - $0.sequence > forgetAfter }
        return resultOf.flatMap { searchResults[$0] }
    }

    /// A frame rescanned while the search it follows was still running: its results and a copy of its luma
    /// plane, kept so that the codes that search finds new can be looked for in it before it is delivered.
    struct Held: @unchecked Sendable {
        // Sendable: handed from the worker that made it to the one that finishes it, through the board's lock.
        var job: ScanPool.Job
        var found: [Detection]
        /// The known codes it lost in a cut.
        var gone: [Detection]
        var luma: [UInt8]
        var width: Int
        var height: Int
        var view: [UInt8]?
        /// The reads the decoders disputed in it so far.
        var disputed: [Detection] = []
    }

    /// Holds a rescanned frame until the search on frame `search` publishes, unless it has by now: then its
    /// results are returned and nothing is held (the caller finishes the frame itself).
    func hold(_ h: Held, until search: Int) -> [Detection]? {
        condition.lock()
        defer { condition.unlock() }
        if let r = searchResults[search] { return r }
        // A search whose results are no longer kept (`resultsKept` frames before the newest finished): finished
        // long ago. Held for it, the frame would never be handed back, and every frame after it would wait in order.
        if let newest = searchResults.keys.max(), newest - search > Self.resultsKept { return [] }
        held[search, default: []].append(h)
        return nil
    }

    /// A search's results, for the frames after it: the frames held for it are handed back (the search's
    /// worker finishes them).
    func finishSearch(_ search: Int, _ detections: [Detection]) -> [Held] {
        condition.lock()
        defer { condition.unlock() }
        searchResults[search] = detections
        searchResults = searchResults.filter { search - $0.key <= Self.resultsKept }
        return held.removeValue(forKey: search) ?? []
    }

    /// Where each known code should be in frame `sequence`.
    /// - Parameter waiting: wait for the first search's results (a frame between searches); a search itself takes
    ///   what is known already.
    func predicted(for sequence: Int, waiting: Bool = true) -> [Expected] {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: 5)
        while waiting && !searched && !ended {
            if !condition.wait(until: deadline) { break }
        }
        return codes.filter { $0.sequence < sequence }.map { c in
            let since = sequence - c.sequence
            guard let p = c.previous, c.sequence > p.sequence else {
                return Expected(detection: c.detection, hasVelocity: false, framesSince: since)
            }
            let steps = Double(c.sequence - p.sequence)
            let now = c.detection.center
            let v = Point((now.x - p.center.x) / steps, (now.y - p.center.y) / steps)
            // Moved more than its own size a frame: not motion that rescans can follow, but a jump (a cut, a
            // camera turned, a clip played again from its start). Its velocity would send the prediction across the
            // frame and the widened read over most of it (the heaviest frame of all; docs/decisions.md): it is
            // looked for around where it was last seen, as a code seen once.
            let b = c.detection.bounds
            guard (v.x * v.x + v.y * v.y).squareRoot() <= Double(max(b.width, b.height)) else {
                return Expected(detection: c.detection, hasVelocity: false, framesSince: since)
            }
            var shifted = c.detection
            shifted.polygon = shifted.polygon.map { Point($0.x + v.x * Double(since), $0.y + v.y * Double(since)) }
            shifted.bounds = Bounds(enclosing: shifted.polygon)
            return Expected(
                detection: shifted, hasVelocity: true, framesSince: since, speed: (v.x * v.x + v.y * v.y).squareRoot())
        }
    }

    /// Forgets the codes a frame judged gone at once (a cut: `TrackedRegions.rescanUnlessCut`), unless a later
    /// frame has seen them since.
    func forget(_ gone: [Detection], before sequence: Int) {
        condition.lock()
        defer { condition.unlock() }
        codes.removeAll { c in
            c.sequence < sequence
                && gone.contains { $0.type == c.detection.type && $0.data == c.detection.data }
        }
    }

    func end() {
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
    }
}
