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
        var outline: BarOutline? = nil
        for i in 0..<zbar_symbol_get_loc_size(s) {
            points.append(Point(Double(zbar_symbol_get_loc_x(s, i)), Double(zbar_symbol_get_loc_y(s, i))))
        }
        if !Self.isTwoDimensional(type) {
            // 1D: ZBar gives scan-line hits, not corners: the read's lines, then its outline from them and the image.
            let orientation = zbar_symbol_get_orientation(s)
            let alongX =
                orientation == ZBAR_ORIENT_UP || orientation == ZBAR_ORIENT_DOWN
                || orientation == ZBAR_ORIENT_UNKNOWN
            let axis = alongX ? Point(1, 0) : Point(0, 1)
            // The hits from the middle of their spread across the scan outward: the lines nearest the code's
            // middle cross it farthest from its bars' ends.
            points = Self.middleFirst(points, alongX: alongX)
            // (A hit on the image's edge is where a line that ran out of image before a quiet zone ended its read,
            // no end of the code.)
            let (w, h) = (Double(image.width), Double(image.height))
            func onCode(_ p: Point) -> Bool { p.x > 0 && p.y > 0 && p.x < w - 1 && p.y < h - 1 }
            // A UPC-E's 51 modules decoded inside a UPC-A's or an EAN-13's 95, told on the read's own lines (before
            // any outline is made for it).
            if type == ZBAR_EAN13, Plausibility.couldBeUPCE(data),
                readsUPCEInsideLongerCode(bytes, hits: points.filter(onCode), axis: axis, in: image)
            {
                return nil
            }
            let least = Plausibility.leastLength(type: name, data: data) ?? 8
            let (lines, exact) = Self.readLines(hits: points, axis: axis, least: least, onCode: onCode) {
                ZBarLineDecoder.span(
                    of: type, bytes: bytes, through: $0, scan: axis, settings: self.settings, in: image)
            } walked: { hit in
                // (A walk that ran off the image may have crossed a quiet zone judged in too wide modules, and the
                // label's edge past it: 6 modules then, as a code's widest inner space is 4.)
                let wide = BarOutline.run(through: hit, along: axis, quiet: 8, in: image)
                return wide?.offImage == true ? BarOutline.run(through: hit, along: axis, quiet: 6, in: image) : wide
            }
            let modules = Plausibility.minimumModules(type: name, data: data)
            // The other hits, those that lie on the read (not past its ends on a line that read on elsewhere).
            let onRead =
                !exact
                ? points.filter(onCode)
                : Self.hits(
                    points, within: lines[0], alongX: alongX, slack: max(1, lines[0].0.distance(to: lines[0].1) / 60))
            outline = BarOutline.estimate(reads: lines, exact: exact, hits: onRead, modules: modules, in: image)
            // A part of a longer code (a line that left a tilted code through its bars' ends), which a symbology
            // without a check character takes for a shorter code: the bars go on past its end.
            if Self.partsReadAsCodes(type), outline?.goesOnPast == true { return nil }
            // A code cut by the image's edge is boxed to the edge: what no pixel shows is no place of the code's.
            // (No bars to fit to: the hits' box along the scan.)
            points = (outline?.corners ?? BarOutline.box(of: points, across: axis)).map {
                Point(min(max($0.x, 0), w), min(max($0.y, 0), h))
            }
        }
        let polygon = points.map(mapping.toFrame)
        var d = Detection(type: name, data: data, quality: Int(zbar_symbol_get_quality(s)), polygon: polygon)
        d.orientation = Detection.Orientation(rawValue: Int8(zbar_symbol_get_orientation(s).rawValue))
        if text == nil { d.binary = bytes }
        d.lengthAcrossBars = outline?.length
        d.acrossBars = outline?.across
        // A code whose quiet zone the image's edge cuts may go on past it, for a symbology a part of which reads as a
        // shorter code.
        d.runsOffImage = Self.partsReadAsCodes(type) && outline?.runsOffImage == true
        d.inViewfinder = viewfinder.map { $0.contains(all: polygon) } ?? true
        return d
    }
}
