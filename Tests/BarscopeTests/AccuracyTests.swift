import Foundation
import Testing

@testable import Barscope

/// The decoding stage on generated codes with known text: what the second passes and the second engine must read
/// (rotated, inverted, faint, small, Shift-JIS, binary), and the wrong reads that must never come out (a code cut
/// by the viewfinder edge, a bad check digit, a phantom narrower than its symbology).
@Suite struct AccuracyTests {
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

        /// The picture rotated by `degrees` (white corners), through the same transform the second passes use.
        func rotated(_ degrees: Double) -> Picture {
            let t = with { TransformedLuma.rotated($0, degrees: degrees) }
            return Picture(pixels: t.pixels, width: t.width, height: t.height)
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
        let picture = Picture(try EAN13.symbol("400638133393"), module: 3).rotated(degrees)
        let found = picture.with { Self.stills.read($0) }
        #expect(found.map(\.data) == ["4006381333931"], "\(degrees)°: \(found)")
        // The box comes back in the rotated picture's pixels: its centre is the picture's.
        let c = try #require(found.first).center
        #expect(
            abs(c.x - Double(picture.width) / 2) < 12 && abs(c.y - Double(picture.height) / 2) < 12,
            "\(c) \(picture.width)x\(picture.height) \(found)")
    }

    @Test func invertedCodeIsRead() throws {
        let picture = Picture(try Code128.symbol("INVERTED-42"), module: 3, dark: 255, light: 0)
        #expect(picture.with { BarcodeReader(engine: .zbar).read($0) }.isEmpty, "ZBar alone reads light-on-dark")
        #expect(picture.with { Self.stills.read($0) }.map(\.data) == ["INVERTED-42"])
    }

    @Test func faintCodeIsRead() throws {
        let picture = Picture(try QRCode.symbol("faint print"), module: 4, dark: 120, light: 150)
        #expect(picture.with { Self.stills.read($0) }.map(\.data) == ["faint print"])
    }

    @Test func smallCodeIsRead() throws {
        // One pixel a module: too small for ZBar's edge detector; the upscaled second pass reads it.
        let picture = Picture(try Code128.symbol("SMALL1"), module: 1, margin: 4)
        #expect(picture.with { Self.stills.read($0) }.map(\.data) == ["SMALL1"])
    }

    @Test func shiftJISTextComesBackAsUnicode() throws {
        // 日本語 in Shift-JIS, byte mode without ECI, as Japanese phones write it; ZBar returns replacement bytes.
        let bytes: [UInt8] = [0x93, 0xFA, 0x96, 0x7B, 0x8C, 0xEA]
        let picture = Picture(try QRCode.symbol(bytes: bytes, text: "日本語"), module: 4)
        let found = picture.with { Self.stills.read($0) }
        #expect(found.map(\.data) == ["日本語"])
        #expect(found.first?.binary == nil)
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
