import CZBar

/// ZBar's own decoder run along one row or column of an image: where a read's characters begin and end on it.
///
/// ZBar places a 1D read where its scan line finished decoding it: the code's last bar in the direction it
/// scanned. Where the code begins on that line follows from the edges the decoder was given: the read spans as
/// many bars and spaces as its symbology gives its text, ending at that last bar. A walk over the line's bars by a
/// threshold can stop short of that: a line grazing the bars' ends of a tilted code crosses them where blur leaves
/// them faint, yet ZBar's edge detector, which follows the line's own contrast, decodes every character.
enum ZBarLineDecoder {
    /// The ends of `bytes` read as `type` on the image's row (`scan` (1, 0)) or column through `hit`, where ZBar
    /// finished decoding it (within 3 px): nil when a decode of that line does not give that text there, for a
    /// symbology whose count of bars and spaces is not known here, or when the settings change how a text maps to
    /// bars (check characters, full ASCII).
    static func span(
        of type: zbar_symbol_type_t, bytes: [UInt8], through hit: Point, scan: Point, settings: ScannerSettings,
        in image: LumaImage
    ) -> (Point, Point)? {
        guard extent(of: type, characters: bytes.count) != nil, !settings.changesCharacters(of: type) else {
            return nil
        }
        // An EAN-13 text that a UPC-E can write may have been printed as one (ZBar reports a UPC-E in its EAN-13
        // form): 33 elements, not 59, and the text does not say which. (Counted as 59, a UPC-E's read began 600 px
        // before its first bar.)
        if type == ZBAR_EAN13 || type == ZBAR_UPCA,
            Plausibility.couldBeUPCE(String(decoding: bytes, as: UTF8.self))
        {
            return nil
        }
        guard let r = run(of: type, bytes: bytes, through: hit, scan: scan, settings: settings, in: image),
            let extent = extent(of: r.type, characters: bytes.count),
            let (first, last) = LineDecoder.ends(of: extent, completedAt: r.completed, in: r.edges)
        else { return nil }
        return r.ordered(r.at(r.edges[first]), r.at(r.edges[last]))
    }

    /// Whether the EAN-13 text `bytes`, one a UPC-E can write, was decoded on the row or column through `hit` as a
    /// UPC-E lying inside a longer code: a quiet zone (5 modules; the widest space inside a code is 4) beside one
    /// of its ends, and a space narrower than that beside the other. ZBar, taking some 51 modules of a UPC-A's or
    /// an EAN-13's 95 for a UPC-E, reads a number with a valid check digit that the code does not carry (seen on a
    /// wrinkled wrapper, in frame after frame). Nil where the line does not decode it as a UPC-E there.
    static func readsUPCEInsideLongerCode(
        _ bytes: [UInt8], through hit: Point, scan: Point, settings: ScannerSettings, in image: LumaImage
    ) -> Bool? {
        guard
            let r = run(
                of: ZBAR_EAN13, bytes: bytes, through: hit, scan: scan, settings: settings, in: image, orUPCE: true),
            r.type == ZBAR_UPCE
        else { return nil }
        // The decoder completes a UPC-E within its end guard's six elements of its last bar, depending on the way
        // it read it: the runs of 33 elements that begin with a bar near where it completed, each with its spaces
        // beside it (infinite where the line ends).
        let e = r.edges
        var oneQuiet = false
        for shift in stride(from: -6, through: 6, by: 2) {
            let (first, last) = (r.completed - 33 + shift, r.completed + shift)
            guard first >= 0, last < e.count else { continue }
            let quiet = 5 * (e[last] - e[first]) / 51
            let before = first > 0 ? e[first] - e[first - 1] : .infinity
            let after = last + 1 < e.count ? e[last + 1] - e[last] : .infinity
            // A UPC-E of its own: quiet zones both sides.
            if before >= quiet && after >= quiet { return false }
            oneQuiet = oneQuiet || before >= quiet || after >= quiet
        }
        // (Neither end of any such run quiet: the run is not where the decoder read a code's end, and tells nothing.)
        return oneQuiet ? true : nil
    }

    /// A read decoded again on the row (`scan` (1, 0)) or column through `hit`: every edge its decoder was given, in
    /// samples along the way it read the line, the one that began the element completing the read, the symbology
    /// it completed as, where a sample lies in the image, and the two ends of a span in the image's order; nil when
    /// the line does not give that text there. `orUPCE`: an EAN-13 text may be decoded as the UPC-E whose EAN-13
    /// form it is.
    private static func run(
        of type: zbar_symbol_type_t, bytes: [UInt8], through hit: Point, scan: Point, settings: ScannerSettings,
        in image: LumaImage, orUPCE: Bool = false
    ) -> (
        edges: [Double], completed: Int, type: zbar_symbol_type_t, at: (Double) -> Point,
        ordered: (Point, Point) -> (Point, Point)
    )? {
        let alongRow = abs(scan.x) >= abs(scan.y)
        let fixed = Int(alongRow ? hit.y : hit.x)
        let count = alongRow ? image.width : image.height
        guard fixed >= 0, fixed < (alongRow ? image.height : image.width), count > 0 else { return nil }
        let step = alongRow ? 1 : image.stride
        let first = image.base.assumingMemoryBound(to: UInt8.self) + (alongRow ? fixed * image.stride : fixed)
        let at = Int((alongRow ? hit.x : hit.y).rounded())
        guard let decoder = LineDecoder(type: type, bytes: bytes, settings: settings, orUPCE: orUPCE) else {
            return nil
        }
        // ZBar scans rows and columns both ways; the way it read this one is the way whose decode ends at the hit.
        // (A read of light bars on dark, which ZBar makes with `test-inverted` from the image inverted, is decoded
        // from inverted samples.)
        for (inverted, reversed) in [(false, false), (false, true), (true, false), (true, true)] {
            let end = reversed ? count - at : at
            let sample = { (i: Int) -> UInt8 in
                let v = first[(reversed ? count - 1 - i : i) * step]
                return inverted ? 255 - v : v
            }
            guard let r = decoder.read(count: count, sample, near: end) else { continue }
            func point(_ t: Double) -> Point {
                let i = reversed ? Double(count) - t : t
                return alongRow ? Point(i, Double(fixed)) : Point(Double(fixed), i)
            }
            return (r.edges, r.completed, r.type, point, { reversed ? ($1, $0) : ($0, $1) })
        }
        return nil
    }

    /// How far back from a read's last bar its first lies, in bars and spaces.
    enum Extent {
        /// A count the text gives (`elements`).
        case elements(Int)
        /// CODE-128: six elements (11 modules) a character, seven (13) to stop, but how many characters a text
        /// takes depends on the code sets its encoder chose (two digits a character in set C, a shift or a switch
        /// between sets), which the text does not say. At least `characters` (its start and check included).
        case code128(characters: Int)
    }

    /// The extent of `n` characters of text read as `type`; nil for a symbology not known here.
    static func extent(of type: zbar_symbol_type_t, characters n: Int) -> Extent? {
        if type == ZBAR_CODE128 { return n > 0 ? .code128(characters: (n + 1) / 2 + 2) : nil }
        return elements(of: type, characters: n).map { .elements($0) }
    }

    /// The bars and spaces from a read's first bar to its last, by its symbology's structure: I2/5, two bars and
    /// two spaces to start, five elements a digit (digits go in pairs, one in the bars and one in the spaces), a
    /// bar, a space and a bar to stop; CODE-39, nine elements a character and a space between, its text between
    /// a start and a stop character; Codabar, seven elements a character and a space between, its text holding
    /// its start and stop characters.
    static func elements(of type: zbar_symbol_type_t, characters n: Int) -> Int? {
        switch type {
        case ZBAR_I25: return n > 0 && n % 2 == 0 ? 5 * n + 7 : nil
        case ZBAR_CODE39: return n > 0 ? 10 * (n + 2) - 1 : nil
        case ZBAR_CODABAR: return n > 1 ? 8 * n - 1 : nil
        // EAN and UPC: guards of 3, 5 and 3 elements, four a digit; the first digit of an EAN-13 (and the 0 that
        // makes a UPC-A one) is told by the left half's parities, not drawn; a UPC-E, given expanded, draws six.
        case ZBAR_EAN13, ZBAR_UPCA, ZBAR_ISBN13, ZBAR_ISBN10: return 59
        case ZBAR_EAN8: return 43
        case ZBAR_UPCE: return 33
        default: return nil
        }
    }

    /// One symbology's bar-width decoder behind ZBar's edge scanner, with the run's settings.
    private final class LineDecoder {
        let decoder: OpaquePointer
        let scanner: OpaquePointer
        let type: zbar_symbol_type_t
        let bytes: [UInt8]
        /// ZBar's edge positions carry this many bits of fraction.
        static let fraction: Int32 = 5

        /// Whether a UPC-E whose EAN-13 form is the text counts too.
        let orUPCE: Bool

        init?(type: zbar_symbol_type_t, bytes: [UInt8], settings: ScannerSettings, orUPCE: Bool = false) {
            guard let decoder = zbar_decoder_create() else { return nil }
            guard let scanner = zbar_scanner_create(decoder) else {
                zbar_decoder_destroy(decoder)
                return nil
            }
            (self.decoder, self.scanner, self.type, self.bytes, self.orUPCE) = (decoder, scanner, type, bytes, orUPCE)
            settings.apply(toDecoder: decoder)
            zbar_decoder_set_config(decoder, ZBAR_NONE, ZBAR_CFG_ENABLE, 0)
            zbar_decoder_set_config(decoder, type, ZBAR_CFG_ENABLE, 1)
            // Enabled, a UPC-E is reported as one (8 digits), no longer in its EAN-13 form.
            if orUPCE { zbar_decoder_set_config(decoder, ZBAR_UPCE, ZBAR_CFG_ENABLE, 1) }
        }

        deinit {
            zbar_scanner_destroy(scanner)
            zbar_decoder_destroy(decoder)
        }

        /// Every edge (in samples) the decoder was given from `count` samples, the index of the one that began the
        /// element completing the text with its end within 3 samples of `end`, and the symbology it completed as;
        /// nil if none.
        func read(count: Int, _ sample: (Int) -> UInt8, near end: Int) -> (
            edges: [Double], completed: Int, type: zbar_symbol_type_t
        )? {
            _ = zbar_scanner_reset(scanner)
            _ = zbar_scanner_new_scan(scanner)
            let scale = Double(1 << Self.fraction)
            // Every edge the decoder was given, in order: a new one each time the scanner's last edge moves (not
            // the value it reports before the first).
            var edges: [UInt32] = []
            let none = zbar_scanner_get_edge(scanner, 0, Self.fraction)
            var completed: (edge: Int, type: zbar_symbol_type_t)? = nil
            func note(_ result: zbar_symbol_type_t) {
                let edge = zbar_scanner_get_edge(scanner, 0, Self.fraction)
                if edge != none, edges.last != edge { edges.append(edge) }
                guard completed == nil, result == type || (orUPCE && result == ZBAR_UPCE),
                    let data = zbar_decoder_get_data(decoder)
                else { return }
                let length = Int(zbar_decoder_get_data_length(decoder))
                let read = data.withMemoryRebound(to: UInt8.self, capacity: length) {
                    Array(UnsafeBufferPointer(start: $0, count: length))
                }
                let same =
                    result == type
                    ? read == bytes
                    : ZXingReader.expandUPCE(String(decoding: read, as: UTF8.self)).map { Array(("0" + $0).utf8) }
                        == bytes
                let start = zbar_scanner_get_edge(scanner, zbar_scanner_get_width(scanner), Self.fraction)
                guard same, abs(Double(start) / scale - Double(end)) <= 3, let at = edges.lastIndex(of: start) else {
                    return
                }
                completed = (at, result)
            }
            for i in 0..<count { note(zbar_scan_y(scanner, Int32(sample(i)))) }
            // The line's end is a scan boundary, as ZBar's image scanner makes it (a code up to the image's edge).
            note(zbar_scanner_flush(scanner))
            note(zbar_scanner_flush(scanner))
            guard let completed else { return nil }
            return (edges.map { Double($0) / scale }, completed.edge, completed.type)
        }

        /// The indices in `edges` of the read's first bar's leading edge and its last bar's trailing edge, given the
        /// edge that began the element whose end completed the read (`completed`).
        /// - A symbology of a known count of elements completes on the space after its last bar: that bar's
        ///   trailing edge is `completed`, and the first bar's leading edge the count before it.
        /// - CODE-128 completes on its stop character's sixth element, before its last bar, read forwards; read
        ///   backwards, on its start character's. Either way, the code is the run of 6 k + 7 elements near there
        ///   (k characters of 11 modules, start and check included, and a stop of 13) with a quiet zone at each end
        ///   (a space of 6 modules or the line's end: the widest space inside it is 4), that begins as a start
        ///   character or a stop read backwards begin (bar, space, bar of 2, 1, 1 modules: edge-to-edge 3 and 2)
        ///   and ends as either ends (1, 1, 2: edge-to-edge 2 and 3); the module is its span over its modules. The
        ///   fewest characters that fit.
        static func ends(of extent: Extent, completedAt completed: Int, in edges: [Double]) -> (Int, Int)? {
            switch extent {
            case .elements(let n):
                return completed - n >= 0 ? (completed - n, completed) : nil
            case .code128(let least):
                for last in (completed - 1)...(completed + 3) where last >= 0 && last < edges.count {
                    var characters = least
                    while last - (6 * characters + 7) >= 0 {
                        let first = last - (6 * characters + 7)
                        let module = Double(edges[last] - edges[first]) / Double(11 * characters + 13)
                        characters += 1
                        guard module > 0 else { continue }
                        func modules(_ a: Int, _ b: Int) -> Double { Double(edges[b] - edges[a]) / module }
                        func near(_ a: Int, _ b: Int, _ width: Double) -> Bool { abs(modules(a, b) - width) < 0.75 }
                        let before = first == 0 ? Double.infinity : modules(first - 1, first)
                        let after = last == edges.count - 1 ? Double.infinity : modules(last, last + 1)
                        if before >= 6, after >= 6, near(first, first + 2, 3), near(first + 1, first + 3, 2),
                            near(last - 3, last - 1, 2), near(last - 2, last, 3)
                        {
                            return (first, last)
                        }
                    }
                }
                return nil
            }
        }
    }
}
