import CCairo
import Foundation
import TestSupport
import Testing

@testable import Barscope

/// The decoding stage on generated codes with known text: what the second passes and the second engine must read
/// (rotated, inverted, faint, small, Shift-JIS, binary), and the wrong reads that must never come out (a code cut
/// by the viewfinder edge, a bad check digit, a phantom narrower than its symbology).
@Suite(.suiteLimit) struct AccuracyTests {
    /// A symbol drawn into a grey image: `module` pixels a module, `margin` pixels of paper around its quiet zone.
    struct Picture {
        var pixels: [UInt8]
        let width: Int
        let height: Int

        init(_ symbol: BarcodeSymbol, module: Int, margin: Int = 20, dark: UInt8 = 0, light: UInt8 = 255) {
            let q = symbol.quietZone
            width = (symbol.widthModules + 2 * q) * module + 2 * margin
            height = (symbol.heightModules + (symbol.isTwoDimensional ? 2 * q : 0)) * module + 2 * margin
            pixels = [UInt8](repeating: light, count: width * height)
            let top = margin + (symbol.isTwoDimensional ? q * module : 0)
            for run in symbol.darkRuns {
                let rows =
                    symbol.isTwoDimensional
                    ? (run.row * module)..<((run.row + 1) * module) : 0..<(symbol.heightModules * module)
                for y in rows {
                    for x in ((q + run.start) * module)..<((q + run.start + run.length) * module) {
                        pixels[(top + y) * width + margin + x] = dark
                    }
                }
            }
        }

        func with<R>(_ body: (LumaImage) -> R) -> R {
            pixels.withUnsafeBytes {
                body(LumaImage(base: $0.baseAddress!, width: width, height: height, stride: width))
            }
        }

        /// The picture rotated by `degrees` about its centre and scaled by `scale`, onto white, by cairo, not by the
        /// reader's own transforms: a second pass that rotated wrongly and mapped back through its own inverse would
        /// otherwise agree with itself. Also returns where `points` (this picture's pixels) land in the new one.
        func rotated(_ degrees: Double, scaled scale: Double = 1, carrying points: [Point] = []) -> (
            picture: Picture, points: [Point]
        ) {
            let a = degrees * .pi / 180
            let w = Int((scale * (Double(width) * abs(cos(a)) + Double(height) * abs(sin(a)))).rounded(.up))
            let h = Int((scale * (Double(width) * abs(sin(a)) + Double(height) * abs(cos(a)))).rounded(.up))
            let source = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(width), Int32(height))!
            defer { cairo_surface_destroy(source) }
            let sourceData = cairo_image_surface_get_data(source)!
            let sourceStride = Int(cairo_image_surface_get_stride(source))
            for y in 0..<height {
                for x in 0..<width {
                    let v = pixels[y * width + x]
                    let p = sourceData + y * sourceStride + x * 4
                    (p[0], p[1], p[2], p[3]) = (v, v, v, 255)
                }
            }
            cairo_surface_mark_dirty(source)
            let target = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(w), Int32(h))!
            defer { cairo_surface_destroy(target) }
            let cr = cairo_create(target)!
            cairo_set_source_rgb(cr, 1, 1, 1)
            cairo_paint(cr)
            cairo_translate(cr, Double(w) / 2, Double(h) / 2)
            cairo_rotate(cr, a)
            cairo_scale(cr, scale, scale)
            cairo_translate(cr, -Double(width) / 2, -Double(height) / 2)
            cairo_set_source_surface(cr, source, 0, 0)
            // GOOD: bilinear when enlarging or rotating, an average over each target pixel's area when shrinking.
            cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_GOOD)
            cairo_paint(cr)
            let moved = points.map { p -> Point in
                var (x, y) = (p.x, p.y)
                cairo_user_to_device(cr, &x, &y)
                return Point(x, y)
            }
            cairo_destroy(cr)
            cairo_surface_flush(target)
            let data = cairo_image_surface_get_data(target)!
            let stride = Int(cairo_image_surface_get_stride(target))
            var out = [UInt8](repeating: 255, count: w * h)
            for y in 0..<h { for x in 0..<w { out[y * w + x] = data[y * stride + x * 4 + 1] } }
            return (Picture(pixels: out, width: w, height: h), moved)
        }

        init(pixels: [UInt8], width: Int, height: Int) {
            self.pixels = pixels
            self.width = width
            self.height = height
        }
    }

    /// Interleaved 2 of 5 (ITF), drawn from its specification: digit pairs, bars from the first, spaces from the
    /// second, narrow 1 and wide 3 modules; start narrow bar-space-bar-space, stop wide bar, narrow space, bar.
    static func itf(_ digits: String) -> BarcodeSymbol {
        let patterns = ["nnwwn", "wnnnw", "nwnnw", "wwnnn", "nnwnw", "wnwnn", "nwwnn", "nnnww", "wnnwn", "nwnwn"]
        let d = digits.compactMap(\.wholeNumberValue)
        var widths: [Int] = [1, 1, 1, 1]
        for i in stride(from: 0, to: d.count, by: 2) {
            for (b, s) in zip(patterns[d[i]], patterns[d[i + 1]]) { widths += [b == "w" ? 3 : 1, s == "w" ? 3 : 1] }
        }
        widths += [3, 1, 1]
        var row: [Bool] = []
        for (i, w) in widths.enumerated() { row += Array(repeating: i % 2 == 0, count: w) }
        return BarcodeSymbol(type: "I2/5", text: digits, modules: [row], quietZone: 10, barHeightModules: 40)
    }

    /// A reader as `barscope scan` makes one (each test its own: a reader is not shared between threads).
    static var stills: BarcodeReader { BarcodeReader(engine: .both, thorough: true) }

    @Test(arguments: [30.0, 45.0, -40.0, 60.0])
    func rotatedLinearCodeIsRead(degrees: Double) throws {
        let module = 3
        let margin = 20
        let symbol = try EAN13.symbol("400638133393")
        let upright = Picture(symbol, module: module, margin: margin)
        // The bars' outline in the upright picture: from the first bar's left edge to the last bar's right edge,
        // the bars' full height.
        let first = symbol.darkRuns.map(\.start).min() ?? 0
        let last = symbol.darkRuns.map { $0.start + $0.length }.max() ?? 0
        let left = Double(margin + (symbol.quietZone + first) * module)
        let right = Double(margin + (symbol.quietZone + last) * module)
        let top = Double(margin)
        let bottom = top + Double(symbol.heightModules * module)
        let outline = [Point(left, top), Point(right, top), Point(right, bottom), Point(left, bottom)]
        let (picture, truth) = upright.rotated(degrees, carrying: outline)
        let found = picture.with { Self.stills.read($0) }
        #expect(found.map(\.data) == ["4006381333931"], "\(degrees)°: \(found)")
        // The polygon comes back in the rotated picture's pixels, on the rotated bars. ZBar's polygon of a 1D code
        // is the band its scan lines crossed, not the bars' full height: in the bars' own axes (u along the code,
        // v along the bars) every corner lies within 4 px (a module and a third) of the outline, and the polygon
        // reaches from the first bar's edge to the last one's, within 4 px.
        let polygon = try #require(found.first).polygon
        let along = truth[1] - truth[0]
        let across = truth[3] - truth[0]
        let length = along.distance(to: Point(0, 0))
        let height = across.distance(to: Point(0, 0))
        let uv = polygon.map { p -> (u: Double, v: Double) in
            let d = p - truth[0]
            return ((d.x * along.x + d.y * along.y) / length, (d.x * across.x + d.y * across.y) / height)
        }
        let tolerance = 4.0
        let us = uv.map(\.u)
        let vs = uv.map(\.v)
        let inside = uv.allSatisfy {
            $0.u >= -tolerance && $0.u <= length + tolerance && $0.v >= -tolerance && $0.v <= height + tolerance
        }
        let spans = (us.min() ?? .infinity) <= tolerance && (us.max() ?? -.infinity) >= length - tolerance
        #expect(
            polygon.count >= 4 && inside && spans,
            "\(degrees)°: polygon \(polygon) in the bars' axes: u \(us), v \(vs) (bars \(length) x \(height) px)")
    }

    @Test func invertedCodeIsRead() throws {
        let picture = Picture(try Code128.symbol("INVERTED-42"), module: 3, dark: 255, light: 0)
        #expect(picture.with { BarcodeReader(engine: .zbar).read($0) }.isEmpty, "ZBar alone reads light-on-dark")
        #expect(picture.with { Self.stills.read($0) }.map(\.data) == ["INVERTED-42"])
    }

    @Test func faintCodeIsRead() throws {
        // Four grey levels between print and paper: both engines read 120 on 150 in the first read; this takes the
        // second passes (the levels stretched).
        let picture = Picture(try QRCode.symbol("faint print"), module: 4, dark: 146, light: 150)
        let reader = Self.stills
        #expect(picture.with { reader.read($0) }.map(\.data) == ["faint print"])
        // A second pass read it, so the first read did not: the second passes are what this tests.
        #expect(
            reader.lastSecondPasses?.stop == .found, "the first read already reads it: the second passes are not tested"
        )
    }

    @Test func smallCodeIsRead() throws {
        // 1.3 pixels a module (drawn at 10, shrunk by cairo, averaging): too small and uneven for either engine in
        // the first read (both read whole pixels a module); the upscaled second pass reads it.
        let picture = Picture(try Code128.symbol("SMALL1"), module: 10, margin: 40).rotated(0, scaled: 0.13).picture
        let reader = Self.stills
        #expect(picture.with { reader.read($0) }.map(\.data) == ["SMALL1"])
        #expect(
            reader.lastSecondPasses?.stop == .found, "the first read already reads it: the second passes are not tested"
        )
    }

    @Test func shiftJISTextComesBackAsUnicode() throws {
        // 日本語 in Shift-JIS, byte mode without ECI, as Japanese phones write it; ZBar returns replacement bytes.
        let bytes: [UInt8] = [0x93, 0xFA, 0x96, 0x7B, 0x8C, 0xEA]
        let picture = Picture(try QRCode.symbol(bytes: bytes, text: "日本語"), module: 4)
        let found = picture.with { Self.stills.read($0) }
        #expect(found.map(\.data) == ["日本語"])
        #expect(found.first?.binary == nil)
    }

    /// ZBar alone, frame after frame, with no second engine to ask: its own guess of the character set took these
    /// for Big5 (`蹬靼翌QR`, `皜祈岫`, as in the real photos qrcode-2_17 and qrcode-2_30).
    @Test(
        arguments: [
            ([0xC3, 0xDE, 0xBB, 0xDE, 0xB2, 0xDD, 0x51, 0x52], "ﾃﾞｻﾞｲﾝQR"),  // Shift-JIS half-width katakana
            (Array("MECARD:N:測試;;".utf8), "MECARD:N:測試;;"),  // UTF-8 Chinese without ECI
            ([0x47, 0x72, 0xFC, 0xDF, 0x65], "Grüße"),  // ISO-8859-1, the 2005 standard's default
            ([0x83, 0x82, 0x83, 0x6F, 0x83, 0x43, 0x83, 0x8B, 0x5C], "モバイル\\"),  // Shift-JIS double bytes; 0x5C stays \
        ] as [([UInt8], String)])
    func legacyCharacterSetsAreReadWithoutASecondEngine(bytes: [UInt8], text: String) throws {
        let picture = Picture(try QRCode.symbol(bytes: bytes, text: text), module: 4)
        let found = picture.with { BarcodeReader(engine: .zbar).read($0) }
        #expect(found.map(\.data) == [text])
        #expect(found.first?.binary == nil)
    }

    @Test func byteTextGuessKeepsLatinTextAndBinaryApart() {
        // Latin text that happens to be valid Shift-JIS (é then l is a Shift-JIS pair) stays Latin: no Japanese word.
        #expect(String(bytes: [0xE9, 0x6C, 0x61, 0x6E] as [UInt8], encoding: .shiftJIS) != nil)
        #expect(QRByteText.text([0xE9, 0x6C, 0x61, 0x6E]) == "élan")
        #expect(QRByteText.text([0xEF, 0xBB, 0xBF, 0x41]) == "A")  // a UTF-8 byte-order mark is no character
        #expect(QRByteText.text([0x00, 0xFF, 0x80, 0x7F]) == nil)  // controls: no text in any of the three sets
        #expect(QRByteText.text([0x1D, 0x30, 0x31]) == "\u{1D}01")  // GS1's separator is text
    }

    @Test func utf8WithAndWithoutECI() throws {
        let text = "Grüße, 日本語 ✓"
        for symbol in [try QRCode.symbol(text), try QRCode.symbol(utf8WithECI: text)] {
            let found = Picture(symbol, module: 4).with { Self.stills.read($0) }
            #expect(found.map(\.data) == [text])
            #expect(found.first?.binary == nil)
        }
    }

    @Test func binaryPayloadKeepsItsBytes() throws {
        let bytes: [UInt8] = [0x00, 0xFF, 0x80, 0x7F, 0x1B, 0xC3, 0x28, 0xFE]
        let picture = Picture(try QRCode.symbol(bytes: bytes, text: ""), module: 4)
        let d = try #require(picture.with { Self.stills.read($0) }.first)
        #expect(d.binary == bytes)
        let line = Event.detection(frame: 0, ptsNs: nil, detection: d, track: nil).jsonLine
        #expect(line.contains("\"encoding\":\"binary\""), "\(line)")
        #expect(line.contains("\"data_base64\":\"\(Data(bytes).base64EncodedString())\""), "\(line)")
    }

    @Test func zxingReadsLinearCodesInZBarsNaming() throws {
        let upcA = Picture(try EAN13.symbol("012345678905"), module: 3)  // 0123456789050: UPC-A 123456789050
        let d = try #require(upcA.with { BarcodeReader(engine: .zxing).read($0) }.first)
        // zxing-cpp calls it UPC-A 123456789050; ZBar's default names it EAN-13 with the leading 0.
        #expect(d.type == "EAN-13" && d.data == "0123456789050", "\(d)")
        #expect(ZXingReader.expandUPCE("01234565") == "012345000065")
        #expect(ZXingReader.expandUPCE("04963406") == "049000006346")
    }

    // MARK: Wrong reads that must not happen

    @Test func interleavedTwoOfFiveCutByTheViewfinderIsNotReported() throws {
        let picture = Picture(Self.itf("30712345000010"), module: 3)
        #expect(picture.with { BarcodeReader().read($0) }.map(\.data) == ["30712345000010"])
        // Crop the picture at every module across the code, as a viewfinder edge would: ZBar alone reads shorter
        // valid I2/5 codes from some of these crops; the decoding stage must report none of them.
        var truncatedByZBar = Set<String>()
        let reader = BarcodeReader()
        for cut in stride(from: 60, to: picture.width - 60, by: 3) {
            let region = PixelRect(x: 0, y: 0, width: cut, height: picture.height)
            picture.with { luma in
                guard let crop = luma.cropped(to: region) else { return }
                for d in ZBarScanner().scan(crop) where d.data != "30712345000010" { truncatedByZBar.insert(d.data) }
                let reported = reader.read(crop, viewfinder: region)
                #expect(
                    reported.allSatisfy { $0.data == "30712345000010" },
                    "cut at \(cut): \(reported.map { "\($0.data) \($0.bounds)" })")
            }
        }
        #expect(!truncatedByZBar.isEmpty, "the check must see ZBar's truncated reads to mean anything")
    }

    @Test func badCheckDigitIsNotRead() throws {
        let good = try EAN13.symbol("400638133393")
        var row = good.modules[0]
        // The last digit (1) drawn as a 7: bits 85..<92, just before the end guard.
        let seven = EAN13.rPatterns[7].map { $0 == "1" }
        row.replaceSubrange(85..<92, with: seven)
        let bad = BarcodeSymbol(
            type: "EAN-13", text: "4006381333937", modules: [row], quietZone: 11, barHeightModules: 50)
        #expect(Picture(good, module: 3).with { Self.stills.read($0) }.map(\.data) == ["4006381333931"])
        #expect(Picture(bad, module: 3).with { Self.stills.read($0) }.isEmpty)
    }

    @Test func phantomNarrowerThanItsSymbologyIsDropped() {
        let phantom = Detection(
            type: "EAN-13", data: "0022121000066", quality: 4, polygon: [Point(111, 115), Point(111, 123)])
        let real = Detection(
            type: "EAN-13", data: "4006381333931", quality: 40,
            polygon: [Point(10, 10), Point(10, 60), Point(300, 60), Point(300, 10)])
        let image = [UInt8](repeating: 255, count: 400 * 200)
        image.withUnsafeBytes { buf in
            let luma = LumaImage(base: buf.baseAddress!, width: 400, height: 200, stride: 400)
            #expect(!Plausibility.accepts(phantom, in: luma, cropped: false))
            #expect(Plausibility.accepts(real, in: luma, cropped: false))
        }
    }

    @Test func enginesAndSettingsParse() throws {
        #expect(try Engine.parse("both") == .both)
        #expect(throws: BarscopeError.self) { try Engine.parse("tesseract") }
        let qrOnly = try ScannerSettings(["disable", "qrcode.enable"])
        #expect(qrOnly.zxingFormats == UInt32(1 << 13))
        let withDataMatrix = try ScannerSettings(["disable", "datamatrix.enable"])
        #expect(withDataMatrix.zxingFormats == UInt32(1 << 7))
        #expect(throws: BarscopeError.self) { try ScannerSettings(["datamatrix.sideways"]) }
    }
}
