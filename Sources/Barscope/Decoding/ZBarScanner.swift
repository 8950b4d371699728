import CZBar

/// One ZBar image scanner. ZBar scanners are not thread-safe: each worker owns its own.
public final class ZBarScanner {
    private var scanner: OpaquePointer
    private var density = (rows: 1, columns: 1)
    /// Which symbologies scans look for now (`setKinds`).
    private(set) var kinds = Kinds.all
    /// What the settings enable, symbology by symbology (ZBar's defaults counted), for `setKinds` to restore.
    private var enabled: [(symbology: zbar_symbol_type_t, on: Int32)] = []
    private let settings: ScannerSettings
    /// The settings ask for payloads' bytes as they are (`-Sbinary`): a QR code's text is then not guessed.
    private let keepsBytes: Bool

    /// - Parameter settings: `-S` values applied after ZBar's defaults.
    public init(settings: ScannerSettings = ScannerSettings()) {
        self.settings = settings
        keepsBytes = settings.binary
        scanner = Self.make(settings)
        enabled = Self.allSymbologies.map { sym in
            var v: Int32 = 0
            return (sym, zbar_image_scanner_get_config(scanner, sym, ZBAR_CFG_ENABLE, &v) == 0 ? v : 0)
        }
    }

    /// Which of the enabled symbologies a scan looks for.
    public enum Kinds: Sendable {
        case all
        /// 1D codes only (QR and SQ off): no QR stage, which binarizes the whole image once it finds finder lines.
        case linear
        /// 2D codes only.
        case matrix
    }

    /// The symbologies this ZBar decodes (PDF417 is left out: it is built without it, and asking about it
    /// crashes; a composite is not a decoder of its own).
    static let allSymbologies: [zbar_symbol_type_t] = [
        ZBAR_EAN2, ZBAR_EAN5, ZBAR_EAN8, ZBAR_UPCE, ZBAR_ISBN10, ZBAR_UPCA, ZBAR_EAN13, ZBAR_ISBN13, ZBAR_I25,
        ZBAR_DATABAR, ZBAR_DATABAR_EXP, ZBAR_CODABAR, ZBAR_CODE39, ZBAR_QRCODE, ZBAR_SQCODE, ZBAR_CODE93,
        ZBAR_CODE128,
    ]

    /// Restricts the scans that follow to 1D or 2D codes among those the settings enable (`.all`: as set).
    public func setKinds(_ k: Kinds) {
        guard k != kinds else { return }
        kinds = k
        applyKinds()
    }

    private func applyKinds() {
        for (sym, on) in enabled {
            let matrix = Self.isTwoDimensional(sym)
            let keep = kinds == .all || (kinds == .matrix) == matrix
            zbar_image_scanner_set_config(scanner, sym, ZBAR_CFG_ENABLE, keep ? on : 0)
        }
    }

    private static func make(_ settings: ScannerSettings) -> OpaquePointer {
        let scanner = zbar_image_scanner_create()!
        // Every frame is judged on its own; the tracker, not ZBar's cache, links frames.
        zbar_image_scanner_enable_cache(scanner, 0)
        settings.apply(to: scanner)
        // A QR code's bytes come raw and `QRByteText` reads them: ZBar's own guess of their character set misreads
        // Shift-JIS and UTF-8 as Big5.
        zbar_image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_BINARY, 1)
        return scanner
    }

    /// A fresh ZBar scanner with the same settings, kinds and densities, for each image. ZBar's decoder keeps what
    /// it half-read from one scan to the next (`zbar_scan_image` resets its QR finder lines only; an EAN's half
    /// waits for the other, the QR reader's random state runs on): an EAN cut short in one image was completed by
    /// a half read in the image before, which in video is another frame, or any frame the worker took before, so a
    /// file scanned twice gave different reads. A scanner costs a few microseconds to make; it also keeps a long
    /// run's memory flat (each decode left about 90 bytes behind).
    private func renew() {
        zbar_image_scanner_destroy(scanner)
        scanner = Self.make(settings)
        applyDensity()
        if kinds != .all { applyKinds() }
    }

    /// Within `body`, every scan is of one image (its second passes, its regions looked at again): ZBar joins what
    /// they half-read, as it joins its own scan lines; the scanner is fresh when `body` starts. Outside, each scan
    /// is an image of its own.
    func readingOneImage<R>(_ body: () -> R) -> R {
        guard !oneImage else { return body() }
        renew()
        oneImage = true
        defer { oneImage = false }
        return body()
    }
    private var oneImage = false

    deinit { zbar_image_scanner_destroy(scanner) }

    /// Scans every n-th row and column (ZBar's y and x density, for every symbology). 2 halves the cost of a
    /// search over the whole frame; codes only a few lines high may then be missed.
    public func setDensity(_ n: Int) { setDensity(rows: n, columns: n) }

    /// Row and column densities apart; 0 turns that direction off (a horizontal 1D code is read along rows only).
    public func setDensity(rows: Int, columns: Int) {
        guard rows != density.rows || columns != density.columns else { return }
        density = (rows, columns)
        applyDensity()
    }

    /// Runs `body` with the scans restricted to `kinds` at these densities, then sets back what was set.
    func scanning<T>(_ kinds: Kinds, rows: Int, columns: Int, _ body: () -> T) -> T {
        let before = (kinds: self.kinds, density: density)
        setKinds(kinds)
        setDensity(rows: rows, columns: columns)
        defer {
            setKinds(before.kinds)
            setDensity(rows: before.density.rows, columns: before.density.columns)
        }
        return body()
    }

    private func applyDensity() {
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_Y_DENSITY, Int32(max(0, density.rows)))
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_X_DENSITY, Int32(max(0, density.columns)))
    }

    /// Scans a luma plane in place (zero-copy: ZBar gets the stride as the width and a crop to the real width).
    /// - Parameters:
    ///   - image: the plane, lent for the duration of the call.
    ///   - mapping: adds the crop offset so that every point comes back in full-frame pixels.
    ///   - viewfinder: the region, if any, to judge `inViewfinder`.
    /// - Returns: the codes found; an unreadable frame is simply an empty list.
    public func scan(_ image: LumaImage, mapping: CropMapping = CropMapping(), viewfinder: PixelRect? = nil)
        -> [Detection]
    {
        let reads = scanned(image) { zimage in detections(of: zimage, image, mapping, viewfinder) } ?? []
        return Self.withoutParts(Self.withoutJoinedHalves(reads))
    }

    /// Whether a 1D read's hits are piled at one end of it (or on one scan line), so that they cannot give its
    /// extent: their spread along the scan is shorter than the code could be at a pixel a module (its symbology's
    /// fewest modules for this text; 8 px for a symbology whose length is not known), or under 2 px across it.
    /// (Seen: a tilted I2/5 read on two lines at its first bars, hits 9 px apart, boxed 9 px long and dropped.)
    static func hitsPiled(_ spread: Bounds, alongX: Bool, type: String, data: String) -> Bool {
        let least = Plausibility.leastLength(type: type, data: data) ?? 8
        return Double(alongX ? spread.width : spread.height) < least || (alongX ? spread.height : spread.width) < 2
    }

    /// The decoder's run through the first few hits that give one: the shorter median of them (a line that left
    /// the code and read on elsewhere runs longer, never shorter).
    static func decodedRun(hits: [Point], span: (Point) -> (Point, Point)?) -> (Point, Point)? {
        let runs = hits.prefix(5).compactMap(span).sorted { $0.0.distance(to: $0.1) < $1.0.distance(to: $1.1) }
        return runs.isEmpty ? nil : runs[(runs.count - 1) / 2]
    }

    /// The hits no farther outside the run `ends` (along the scan) than they are from its line across the scan,
    /// give or take `slack` (about a module).
    static func hits(_ hits: [Point], within ends: (Point, Point), alongX: Bool, slack: Double) -> [Point] {
        let (lo, hi) =
            alongX
            ? (min(ends.0.x, ends.1.x), max(ends.0.x, ends.1.x)) : (min(ends.0.y, ends.1.y), max(ends.0.y, ends.1.y))
        let line = alongX ? ends.0.y : ends.0.x
        return hits.filter { hit in
            let (along, off) = alongX ? (hit.x, abs(hit.y - line)) : (hit.y, abs(hit.x - line))
            return along >= lo - off - slack && along <= hi + off + slack
        }
    }

    /// A scan line through a tilted I2/5, CODE-39 or Codabar that leaves it through its bars' ends reads a part of
    /// it, which these symbologies take for a shorter code; where another line of the same image read the whole,
    /// the part lies on it: a read whose text is inside a longer read's of the same symbology, and whose centre is
    /// inside that read's box, is that read's part, and is dropped (seen on a 720p clip: `742332` in
    /// `7423321081`, read on one line).
    static func withoutParts(_ reads: [Detection]) -> [Detection] {
        guard reads.count > 1, reads.contains(where: { partsReadAsCodes(name: $0.type) }) else { return reads }
        return reads.filter { part in
            !(partsReadAsCodes(name: part.type)
                && reads.contains { whole in
                    whole.type == part.type && whole.data.count > part.data.count && whole.data.contains(part.data)
                        && whole.bounds.contains(part.center)
                })
        }
    }

    /// ZBar joins an EAN's or a UPC's halves as its scan lines meet them, and a line across two such codes side by
    /// side can join one code's half to the other's (seen on a low-bitrate 1080p clip: two codes side by side gave
    /// two more numbers): a third number, whose check digit passes one time in ten. A read
    /// whose left half is one read's and whose right half is another's, those two read in separate places, is such
    /// a join, and is dropped. (Two codes that share a half, read apart, are not: neither is made of the other two.)
    static func withoutJoinedHalves(_ reads: [Detection]) -> [Detection] {
        let kinds: Set<String> = ["EAN-13", "UPC-A", "ISBN-13", "EAN-8"]
        // (Almost every image has fewer than three such reads: nothing to compare, nothing made.)
        guard reads.lazy.filter({ kinds.contains($0.type) }).count >= 3 else { return reads }
        func halves(_ d: Detection) -> (left: String, right: String)? {
            guard kinds.contains(d.type), d.data.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            let digits = d.data.count == 12 ? "0" + d.data : d.data
            switch digits.count {
            case 13: return (String(digits.prefix(7)), String(digits.suffix(6)))
            case 8: return (String(digits.prefix(4)), String(digits.suffix(4)))
            default: return nil
            }
        }
        let split = reads.map(halves)
        return reads.indices.filter { i in
            guard let mine = split[i] else { return true }
            let others = reads.indices.filter { $0 != i && split[$0] != nil && reads[$0].data != reads[i].data }
            let lefts = others.filter { split[$0]!.left == mine.left }
            let rights = others.filter { split[$0]!.right == mine.right }
            let joined = lefts.contains { l in
                rights.contains { r in reads[l].data != reads[r].data && !reads[l].bounds.intersects(reads[r].bounds) }
            }
            return !joined
        }.map { reads[$0] }
    }

    /// Lends ZBar's image of `image`, scanned, to `body` (its symbols), or nil when nothing was found. The image
    /// is handed back to the scanner afterwards, as the stock element does: without that the symbols of every
    /// decode stayed allocated (about 5 KB/s on the live demo).
    private func scanned<R>(_ image: LumaImage, _ body: (OpaquePointer) -> R) -> R? {
        if !oneImage { renew() }
        guard let zimage = zbar_image_create() else { return nil }
        defer {
            zbar_image_scanner_recycle_image(scanner, zimage)
            zbar_image_destroy(zimage)
        }
        zbar_image_set_format(zimage, y800)
        zbar_image_set_size(zimage, UInt32(image.stride), UInt32(image.height))
        zbar_image_set_crop(zimage, 0, 0, UInt32(image.width), UInt32(image.height))
        zbar_image_set_data(zimage, image.base, UInt(image.stride * image.height), nil)
        guard zbar_scan_image(scanner, zimage) > 0 else { return nil }
        return body(zimage)
    }

    /// Every code of a scanned image (`scan`).
    private func detections(
        of zimage: OpaquePointer, _ image: LumaImage, _ mapping: CropMapping, _ viewfinder: PixelRect?
    ) -> [Detection] {
        var found: [Detection] = []
        var symbol = zbar_image_first_symbol(zimage)
        while let s = symbol {
            defer { symbol = zbar_symbol_next(s) }
            let type = zbar_symbol_get_type(s)
            // (An EAN code with an add-on is a composite too, of another type: it stays one code, as before.)
            guard let first = zbar_symbol_first_component(s), type == ZBAR_QRCODE || type == ZBAR_PARTIAL else {
                if let d = detection(s, type: type, image, mapping, viewfinder) { found.append(d) }
                continue
            }
            // A structured append: ZBar joins the QR codes of one message it finds in an image into a container
            // symbol, QR-Code when every part is there (its text the whole message), ZBAR_PARTIAL ("UNKNOWN") when
            // some are missing (the text of those present, a NUL at each gap). Its components are the parts, in
            // order, each with its corners, and a ZBAR_PARTIAL placeholder (no corners) for each run of missing
            // ones. Each part is reported as the QR code it is. ZBar does not expose the parts' headers; when it has
            // them all, their order is their index.
            let whole = Self.bytes(of: s)
            let base = zbar_symbol_get_data(s)
            var components: [(symbol: OpaquePointer, placeholder: Bool, offset: Int)] = []
            var component: OpaquePointer? = first
            while let c = component {
                defer { component = zbar_symbol_next(c) }
                var offset = 0
                if let p = zbar_symbol_get_data(c), let base { offset = p - base }
                components.append(
                    (c, zbar_symbol_get_type(c) == ZBAR_PARTIAL || zbar_symbol_get_loc_size(c) == 0, offset))
            }
            let texts = Self.partTexts(whole, components.map { ($0.placeholder, $0.offset) })
            var parts: [Detection] = []
            for (c, text) in zip(components.filter { !$0.placeholder }, texts) {
                guard var part = detection(c.symbol, type: ZBAR_QRCODE, bytes: text, image, mapping, viewfinder) else {
                    continue
                }
                part.sequencePart = true
                parts.append(part)
            }
            if type == ZBAR_QRCODE {
                for i in parts.indices { parts[i].sequence = StructuredAppend(index: i, count: parts.count, id: nil) }
            }
            found += parts
        }
        return found
    }

    /// One 1D read of a synthetic image (a bar profile drawn as rows, `HardCodeReader`): its type, text and where
    /// along x its hits lie; no box, no refinement (the image is not a picture of the code).
    struct ProfileRead {
        let type: String
        let data: String
        let xRange: ClosedRange<Double>
    }

    /// Scans an image along its rows alone for 1D codes, giving texts and x extents only.
    func profileReads(_ image: LumaImage) -> [ProfileRead] {
        scanned(image) { zimage in Self.profileReads(of: zimage) } ?? []
    }

    private static func profileReads(of zimage: OpaquePointer) -> [ProfileRead] {
        var out: [ProfileRead] = []
        var symbol = zbar_image_first_symbol(zimage)
        while let s = symbol {
            defer { symbol = zbar_symbol_next(s) }
            let type = zbar_symbol_get_type(s)
            guard !isTwoDimensional(type), zbar_symbol_get_loc_size(s) > 0 else { continue }
            let xs = (0..<zbar_symbol_get_loc_size(s)).map { Double(zbar_symbol_get_loc_x(s, $0)) }
            out.append(
                ProfileRead(
                    type: String(cString: zbar_get_symbol_name(type)),
                    data: String(decoding: bytes(of: s), as: UTF8.self), xRange: xs.min()!...xs.max()!))
        }
        return out
    }

    /// The bytes of a symbol's text (NULs included: a partial structured append has one at each gap).
    private static func bytes(of s: OpaquePointer) -> [UInt8] {
        let length = Int(zbar_symbol_get_data_length(s))
        return zbar_symbol_get_data(s).map { p in
            p.withMemoryRebound(to: UInt8.self, capacity: length) {
                Array(UnsafeBufferPointer(start: $0, count: length))
            }
        } ?? []
    }

    /// Each present part's text, cut from the container's (`whole`), given its components in order as
    /// (placeholder, offset of the component's data in the container's). ZBar 0.23's own lengths for the parts are
    /// one byte short (they assume a NUL between every two parts, written only at gaps), and a part right after a
    /// gap points at the gap's NUL; so only the offsets of parts that follow a part are trusted: a part ends where
    /// the next part starts, at the next gap's NUL, or at the end.
    static func partTexts(_ whole: [UInt8], _ components: [(placeholder: Bool, offset: Int)]) -> [[UInt8]] {
        var texts: [[UInt8]] = []
        var cursor = 0
        for (k, c) in components.enumerated() {
            if c.placeholder {
                // A gap before more parts left a NUL; one at the end left nothing.
                if k + 1 < components.count, cursor < whole.count, whole[cursor] == 0 { cursor += 1 }
                continue
            }
            let next = k + 1 < components.count ? components[k + 1] : nil
            var end = whole.count
            if let next, !next.placeholder {
                end = min(max(cursor, next.offset), whole.count)
            } else if let nul = whole[cursor...].firstIndex(of: 0) {
                end = nul
            }
            texts.append(Array(whole[cursor..<end]))
            cursor = end
        }
        return texts
    }

    /// One ZBar symbol as a detection, named as `type` (a structured append's parts are QR codes), its text
    /// `bytes` when given (a part's, cut from its container's), else its own; nil for a 1D read that no scan line
    /// crossed whole where only a whole crossing counts (see below).
    private func detection(
        _ s: OpaquePointer, type: zbar_symbol_type_t, bytes given: [UInt8]? = nil, _ image: LumaImage,
        _ mapping: CropMapping, _ viewfinder: PixelRect?
    ) -> Detection? {
        let name = String(cString: zbar_get_symbol_name(type))
        let bytes = given ?? Self.bytes(of: s)
        // Bytes that are no text (a binary payload, or any bytes in binary mode that are not UTF-8) are kept as they
        // are, beside a readable rendering.
        let text =
            type == ZBAR_QRCODE && !keepsBytes
            ? QRByteText.text(bytes) : String(validating: bytes, as: UTF8.self)
        let data = text ?? String(decoding: bytes, as: UTF8.self)
        var points: [Point] = []
        var refined: BarEdgeRefiner.Refined? = nil
        var acrossBars: Point? = nil
        for i in 0..<zbar_symbol_get_loc_size(s) {
            points.append(Point(Double(zbar_symbol_get_loc_x(s, i)), Double(zbar_symbol_get_loc_y(s, i))))
        }
        if !Self.isTwoDimensional(type) {
            // 1D: ZBar gives scan-line hits, not corners; box them, then snap the ends to the bars.
            // The hits are where scan lines entered and left the code; a tilted code's bars are found from
            // the image itself (its dominant edge direction), and the box is built across them.
            let orientation = zbar_symbol_get_orientation(s)
            let alongX =
                orientation == ZBAR_ORIENT_UP || orientation == ZBAR_ORIENT_DOWN
                || orientation == ZBAR_ORIENT_UNKNOWN
            let axis = alongX ? Point(1, 0) : Point(0, 1)
            // ZBar's decoder run along a hit's line gives the read's first and last bar. A line that left the code
            // through its bars' ends and found the rest of its elements farther on (an I2/5, which has no check digit,
            // can end on bars of the background) decodes a longer run than the lines that
            // crossed the code; so of a few hits' runs the shorter median is the code's, and a hit farther outside
            // it than its line is from the run's line (a code's end moves along the scan by at most that, tilted up
            // to 45 degrees, past which ZBar reads it on the other axis) is such a line's, and is no end of the code.
            let decoded = Self.decodedRun(hits: points) {
                ZBarLineDecoder.span(
                    of: type, bytes: bytes, through: $0, scan: axis, settings: self.settings, in: image)
            }
            if let ends = decoded {
                let kept = Self.hits(
                    points, within: ends, alongX: alongX, slack: max(1, ends.0.distance(to: ends.1) / 60))
                if kept.count >= 2 { points = kept }
            }
            var across = BarEdgeRefiner.acrossBars(in: image, around: Bounds(enclosing: points)) ?? axis
            let hits = points
            var oneLine = false
            // Hits piled at one end of the code (read on a few lines in the same direction) or all on one scan
            // line, as small and short codes often are read: where the code runs comes from the image then,
            // along the hits' lines, and for I2/5, CODE-39 and Codabar only a line that crossed all of it counts
            // (a line through a tilted code that leaves it through its bars' ends reads a part of it, which
            // I2/5 takes for a shorter code); where a line beside the hit's runs longer, ZBar's decoder run along
            // the hit's line says where the read's characters lie.
            if Self.hitsPiled(Bounds(enclosing: points), alongX: alongX, type: name, data: data) {
                // The first hit whose line crossed the whole code; without that test, the longest extent of a
                // few hits' lines (EAN's halves can come from different lines, none of them crossing it all).
                let whole = Self.partsReadAsCodes(type)
                // The read's own ends on its line only for a read that must have crossed it whole (no closure
                // made for the others).
                let spans = points.prefix(whole ? 4 : 8).lazy.compactMap { hit in
                    BarEdgeRefiner.singleLineSpan(
                        hit: hit, scan: axis, whole: whole, in: image,
                        readEnds: whole
                            ? {
                                ZBarLineDecoder.span(
                                    of: type, bytes: bytes, through: hit, scan: axis, settings: self.settings,
                                    in: image)
                            } : nil)
                }
                func extent(_ s: (ends: [Point], across: Point)) -> Double { s.ends[0].distance(to: s.ends[1]) }
                guard let single = whole ? spans.first : spans.max(by: { extent($0) < extent($1) }) else {
                    return nil
                }
                points = single.ends
                across = single.across
                oneLine = true
            }
            let tensor = across
            if Self.thinBars(points, axis: axis, name: name, data: data) {
                across = BarEdgeRefiner.acrossBarsFromProfile(
                    in: image, points: points, initial: axis, oneLine: oneLine)
            }
            var r = BarEdgeRefiner.refine(BarEdgeRefiner.box(of: points, across: across), in: image, across: across)
            // Longer across its bars than its hits' lines ran: no scan line gives that (a line crossing a code at
            // an angle θ to the way its bars follow one another runs L / cos θ along itself, and ZBar's hits span
            // that run), but a direction judged wrong does (seen: a level CODE-39 of 1.3 px modules, read on two
            // lines near its bars' top ends, judged 47 degrees off by its profile and boxed 319 px long where its
            // hits spanned 161). The image's dominant direction then, else the scan line's. (Not EAN and UPC: ZBar
            // joins their halves from different lines, so their hits can span one half, and the refiner the whole.)
            let along = points.map { $0.x * axis.x + $0.y * axis.y }
            let reach = 1.25 * ((along.max() ?? 0) - (along.min() ?? 0)) + 8
            if r.length > reach, !Self.halvesJoined(type) {
                for other in [tensor, axis] where other != across {
                    let o = BarEdgeRefiner.refine(
                        BarEdgeRefiner.box(of: points, across: other), in: image, across: other)
                    if o.length <= reach {
                        (r, across) = (o, other)
                        break
                    }
                }
            }
            // A box shorter than the symbology's fewest modules: the hits covered part of the code (EAN's halves
            // joined from lines that each crossed half) and the refiner could not reach its ends (too faint).
            // Where a part cannot read as a shorter code (fixed length or check characters), the longest run of
            // bars along the hits' lines is the code's extent, if longer.
            if !Self.partsReadAsCodes(type), let least = Plausibility.leastLength(type: name, data: data),
                Plausibility.length(of: r.corners) < least
            {
                let runs = hits.prefix(8).compactMap {
                    BarEdgeRefiner.singleLineSpan(hit: $0, scan: axis, whole: false, in: image)
                }
                if let best = runs.max(by: {
                    $0.ends[0].distance(to: $0.ends[1]) < $1.ends[0].distance(to: $1.ends[1])
                }),
                    best.ends[0].distance(to: best.ends[1]) > Plausibility.length(of: r.corners)
                {
                    across =
                        Self.thinBars(best.ends, axis: axis, name: name, data: data)
                        ? BarEdgeRefiner.acrossBarsFromProfile(
                            in: image, points: best.ends, initial: axis, oneLine: true)
                        : best.across
                    r = BarEdgeRefiner.refine(
                        BarEdgeRefiner.box(of: best.ends, across: across), in: image, across: across)
                }
            }
            // The box ends at the read's first and last bar, never past (a box that ran on over a short quiet zone
            // onto other bars past a tilted I2/5 touched the viewfinder's edge and was dropped as cut by it; a
            // UPC-A's ran on over printed text to the frame's edge).
            if let ends = decoded {
                // A module: the run over the fewest modules its text can span (span knows only such symbologies).
                let run = ends.0.distance(to: ends.1)
                let module = run / Double(Plausibility.minimumModules(type: name, data: data) ?? 1)
                // About a module's slack: a sixtieth of the run (an EAN-13 spans 95 modules, a 10-digit I2/5 78).
                r.corners = BarEdgeRefiner.trimmed(r.corners, to: ends, across: across, slack: max(1, run / 60))
                r.length = min(r.length, abs((ends.1.x - ends.0.x) * across.x + (ends.1.y - ends.0.y) * across.y))
                if Self.partsReadAsCodes(type) {
                    // Cut across its bars by the image's edge (a viewfinder's), a code reads as a shorter one that
                    // ends at the edge; a read whose first and last bar each have a quiet zone (10 modules) of image
                    // beyond them is whole, whatever the walks along its bars ran into.
                    let size = Double(alongX ? image.width : image.height)
                    let along = [ends.0, ends.1].map { alongX ? $0.x : $0.y }
                    r.runsOffImage = along.contains { $0 < 10 * module || $0 > size - 10 * module }
                }
            }
            // A code cut by the image's edge is boxed to the edge: its outline goes on past it only as far as the
            // fit's lines run, and what no pixel shows is no place of the code's.
            let (w, h) = (Double(image.width), Double(image.height))
            points = r.corners.map { Point(min(max($0.x, 0), w), min(max($0.y, 0), h)) }
            refined = r
            acrossBars = across
        }
        let polygon = points.map(mapping.toFrame)
        var d = Detection(type: name, data: data, quality: Int(zbar_symbol_get_quality(s)), polygon: polygon)
        d.orientation = Detection.Orientation(rawValue: Int8(zbar_symbol_get_orientation(s).rawValue))
        if text == nil { d.binary = bytes }
        d.lengthAcrossBars = refined?.length
        d.acrossBars = acrossBars
        d.runsOffImage = refined?.runsOffImage ?? false
        d.inViewfinder = viewfinder.map { $0.contains(all: polygon) } ?? true
        return d
    }

    /// Whether a 1D code's modules are under 2.5 px, judged from its hits' extent and its symbology's fewest modules
    /// (unknown: thin). Only then is the direction across its bars searched from its profile: the structure tensor
    /// judges thicker bars well, and the profile search (39 angles, each over the code's length on 21 lines) cost
    /// 14 ms a frame on the 1080p demo's three large 1D codes in tracked mode, where every frame's codes are boxed.
    static func thinBars(_ points: [Point], axis: Point, name: String, data: String) -> Bool {
        guard let fewest = Plausibility.minimumModules(type: name, data: data), fewest > 0 else { return true }
        let along = points.map { $0.x * axis.x + $0.y * axis.y }
        return ((along.max() ?? 0) - (along.min() ?? 0)) / Double(fewest) < 2.5
    }

    /// Variable-length symbologies without a check character that ZBar demands: a part of one can read as a
    /// shorter valid code.
    static func partsReadAsCodes(_ type: zbar_symbol_type_t) -> Bool { partsReadAsCodesTypes.contains(type) }

    /// The same, by the reported name (both engines name them as ZBar does).
    static func partsReadAsCodes(name: String) -> Bool { partsReadAsCodesNames.contains(name) }

    private static let partsReadAsCodesTypes = [ZBAR_I25, ZBAR_CODE39, ZBAR_CODABAR]
    private static let partsReadAsCodesNames = Set(
        partsReadAsCodesTypes.map { String(cString: zbar_get_symbol_name($0)) })

    /// EAN and UPC, whose two halves ZBar may read on different scan lines.
    static func halvesJoined(_ type: zbar_symbol_type_t) -> Bool {
        [ZBAR_EAN8, ZBAR_EAN13, ZBAR_UPCA, ZBAR_UPCE, ZBAR_ISBN10, ZBAR_ISBN13].contains(type)
    }

    static func isTwoDimensional(_ type: zbar_symbol_type_t) -> Bool {
        type == ZBAR_QRCODE || type == ZBAR_SQCODE
    }

    /// 2D by the reported name (both engines' names): these have four real corners and a character set.
    static func isTwoDimensional(name: String) -> Bool {
        ["QR-Code", "SQ-Code", "Micro-QR", "DataMatrix", "Aztec", "PDF417", "MaxiCode"].contains(name)
    }
}

/// ZBar's name for 8-bit grey, 'Y800' as a little-endian fourcc (computed once, not per frame).
let y800: UInt = 0x3030_3859
