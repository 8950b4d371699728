import CZBar

/// ZBar's symbols as detections: a structured append's parts cut from their container, a 1D read boxed from its hits.
extension ZBarScanner {
    /// Every code of a scanned image (`scan`).
    func detections(
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

    /// The bytes of a symbol's text (NULs included: a partial structured append has one at each gap).
    static func bytes(of s: OpaquePointer) -> [UInt8] {
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
            // The hits from the middle of their spread across the scan outward: the lines the ends and runs below
            // are taken from cross the code farthest from its bars' ends (ZBar lists its hits in scan order, so the
            // first few lie where the code begins across the scan: a tilted code's lines there graze its corner).
            points = Self.middleFirst(points, alongX: alongX)
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
}
