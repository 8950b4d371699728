import CZBar
import CZXingReader
import TestSupport
import Testing

@testable import Barscope

/// ZBar's decoder run along one line: where a read's characters begin and end on the line it was read on.
@Suite(.suiteLimit) struct ZBarLineDecoderTests {
    /// An ITF of 2-px modules, with a dark mark in the margin past its right quiet zone (so that a decode left to
    /// right finishes at the mark's edge, mid-line, as in a frame): the read's ends on its row are the first bar's
    /// leading edge and the last bar's trailing edge, whichever way it was read (ZBar places a read at the end
    /// where its scan finished: the right end left to right, the left end right to left), and on a row whose first
    /// bar is faint (170 on 255; ZBar, scanning from the left, still decodes it). Another text, or a hit where no
    /// decode finishes (the code's middle), gives nothing.
    @Test func aReadsEndsOnItsLineAreItsFirstAndLastBars() {
        let symbol = AccuracyTests.itf("12345670")
        let (module, margin) = (2, 20)
        var picture = AccuracyTests.Picture(symbol, module: module, margin: margin)
        let (left, right) = Self.barsEnds(symbol, module: module, margin: margin)
        for y in 0..<picture.height {
            for x in (picture.width - 12)..<(picture.width - 8) { picture.pixels[y * picture.width + x] = 0 }
        }
        let (plain, faint) = (Double(picture.height / 2 - 4), Double(picture.height / 2))
        for x in Int(left)..<(Int(left) + module) { picture.pixels[Int(faint) * picture.width + x] = 170 }
        let bytes = Array("12345670".utf8)
        picture.with { image in
            func span(_ hit: Point, _ text: [UInt8]) -> (Point, Point)? {
                ZBarLineDecoder.span(
                    of: ZBAR_I25, bytes: text, through: hit, scan: Point(1, 0), settings: ScannerSettings(), in: image)
            }
            for hit in [Point(right, plain), Point(left, plain), Point(right, faint)] {
                let found = span(hit, bytes)
                #expect(found != nil, "hit \(hit)")
                if let (a, b) = found {
                    #expect(abs(a.x - left) <= 1.5 && abs(b.x - right) <= 1.5, "hit \(hit): \(a.x)...\(b.x)")
                    #expect(a.y == hit.y && b.y == hit.y)
                }
            }
            #expect(span(Point(right, plain), Array("123456".utf8)) == nil)
            #expect(span(Point((left + right) / 2, plain), bytes) == nil)
        }
        // The same code turned a quarter (bars across the columns), in rows padded past the width (as GStreamer
        // pads them): read along its column, top to bottom.
        let (w, h) = (picture.height, picture.width)
        let stride = w + 7
        var turned = [UInt8](repeating: 99, count: stride * h)
        for y in 0..<h { for x in 0..<w { turned[y * stride + x] = picture.pixels[x * picture.width + y] } }
        turned.withUnsafeBytes { raw in
            let image = LumaImage(base: raw.baseAddress!, width: w, height: h, stride: stride)
            let found = ZBarLineDecoder.span(
                of: ZBAR_I25, bytes: bytes, through: Point(plain, right), scan: Point(0, 1),
                settings: ScannerSettings(),
                in: image)
            #expect(found != nil)
            if let (a, b) = found {
                #expect(abs(a.y - left) <= 1.5 && abs(b.y - right) <= 1.5 && a.x == plain && b.x == plain, "\(a) \(b)")
            }
        }
    }

    /// An EAN-13 (and a UPC-A, given as ZBar gives it, EAN-13 with a leading 0) of 2-px modules: its ends on a row
    /// are its first guard bar's leading edge and its last guard bar's trailing edge, 95 modules apart.
    @Test(arguments: ["4006381333931", "0012345678905"])
    func anEANsEndsOnItsLineAreItsGuardBars(text: String) throws {
        let symbol = try EAN13.symbol(text)
        let (module, margin) = (2, 20)
        let picture = AccuracyTests.Picture(symbol, module: module, margin: margin)
        let (left, right) = Self.barsEnds(symbol, module: module, margin: margin)
        #expect(right - left == Double(95 * module))
        let row = Double(picture.height / 2)
        picture.with { image in
            let found = [Point(right, row), Point(left, row)].compactMap {
                ZBarLineDecoder.span(
                    of: ZBAR_EAN13, bytes: Array(text.utf8), through: $0, scan: Point(1, 0),
                    settings: ScannerSettings(), in: image)
            }
            #expect(!found.isEmpty)
            for (a, b) in found { #expect(abs(a.x - left) <= 1.5 && abs(b.x - right) <= 1.5, "\(a.x)...\(b.x)") }
        }
    }

    /// An EAN-13 text a UPC-E can write (ZBar reports a UPC-E in its EAN-13 form) may have been printed as either,
    /// 59 elements or 33: the decoder's run does not place it (counted as 59 on a UPC-E, its read began 600 px
    /// before its first bar), while the same picture of another text is placed.
    @Test func anEANTextAUPCECanWriteIsNotPlacedByItsCount() throws {
        let text = "0033250000032"
        #expect(Plausibility.couldBeUPCE(text))
        let symbol = try EAN13.symbol(text)
        let (module, margin) = (2, 20)
        let picture = AccuracyTests.Picture(symbol, module: module, margin: margin)
        let (left, right) = Self.barsEnds(symbol, module: module, margin: margin)
        let row = Double(picture.height / 2)
        picture.with { image in
            for hit in [Point(right, row), Point(left, row)] {
                #expect(
                    ZBarLineDecoder.span(
                        of: ZBAR_EAN13, bytes: Array(text.utf8), through: hit, scan: Point(1, 0),
                        settings: ScannerSettings(), in: image) == nil)
            }
        }
    }

    /// A UPC-E (ZBar's text: its EAN-13 form) read on a row: alone, it lies on no longer code; with bars 3 modules
    /// past its end guard (as a UPC-E that ZBar decodes from a part of a UPC-A's bars has the UPC-A's next digits
    /// there), it does, on every line that decodes it; a line that does not decode it tells nothing.
    @Test func aUPCEWithBarsWithinAQuietZonePastItsEndLiesInsideALongerCode() throws {
        var modules = [UInt8](repeating: 0, count: 512)
        let n = bs_zx_encode_linear(UInt32(BS_ZX_UPCE), "0123456", &modules, Int32(modules.count))
        try #require(n > 0)
        let symbol = BarcodeSymbol(
            type: "EAN-13", text: "0012345000065", modules: [modules.prefix(Int(n)).map { $0 != 0 }], quietZone: 10,
            barHeightModules: 30)
        let bytes = Array("0012345000065".utf8)
        #expect(Plausibility.couldBeUPCE(symbol.text))
        let (module, margin) = (3, 20)
        let plain = AccuracyTests.Picture(symbol, module: module, margin: margin)
        var longer = plain
        let (left, right) = Self.barsEnds(symbol, module: module, margin: margin)
        for y in 0..<longer.height {
            for x in [4, 5, 7, 9, 10].flatMap({ Int(right) + ($0 * module)..<Int(right) + (($0 + 1) * module) }) {
                longer.pixels[y * longer.width + x] = 0
            }
        }
        let row = Double(plain.height / 2)
        func judged(_ picture: AccuracyTests.Picture) -> [Bool] {
            picture.with { image in
                stride(from: left - 6, through: right + 6, by: 1).compactMap {
                    ZBarLineDecoder.readsUPCEInsideLongerCode(
                        bytes, through: Point($0, row), scan: Point(1, 0), settings: ScannerSettings(), in: image)
                }
            }
        }
        let alone = judged(plain)
        #expect(!alone.isEmpty && alone.allSatisfy { !$0 }, "\(alone)")
        let inside = judged(longer)
        #expect(!inside.isEmpty && inside.allSatisfy { $0 }, "\(inside)")
        plain.with { image in
            #expect(
                ZBarLineDecoder.readsUPCEInsideLongerCode(
                    bytes, through: Point((left + right) / 2, row), scan: Point(1, 0), settings: ScannerSettings(),
                    in: image) == nil)
        }
    }

    /// A CODE-128, whose count of characters its text does not give (set B spends one a letter, set C one per two
    /// digits), of 2-px modules, with dark marks in the margins past both quiet zones: its ends on a row are its start
    /// character's first bar and its stop character's last, whichever way it was read, and wherever ZBar finished
    /// reading it (the stop's sixth element read forwards, two modules short of its last bar).
    @Test(arguments: ["NyOp:S", "12345678"])
    func aCode128sEndsOnItsLineAreItsStartAndStopCharacters(text: String) throws {
        let symbol = try Code128.symbol(text)
        let (module, margin) = (2, 20)
        var picture = AccuracyTests.Picture(symbol, module: module, margin: margin)
        let (left, right) = Self.barsEnds(symbol, module: module, margin: margin)
        for y in 0..<picture.height {
            for x in [6, 7, 8, 9, picture.width - 9, picture.width - 8, picture.width - 7, picture.width - 6] {
                picture.pixels[y * picture.width + x] = 0
            }
        }
        let row = Double(picture.height / 2)
        picture.with { image in
            // ZBar places the read within a few modules of one end, by the way it scanned: every hit near either
            // end that gives a span gives the code's.
            func spans(near x: Double) -> [(Point, Point)] {
                stride(from: x - 8, through: x + 8, by: 1).compactMap {
                    ZBarLineDecoder.span(
                        of: ZBAR_CODE128, bytes: Array(text.utf8), through: Point($0, row), scan: Point(1, 0),
                        settings: ScannerSettings(), in: image)
                }
            }
            for end in [left, right] {
                let found = spans(near: end)
                #expect(!found.isEmpty, "no span near \(end)")
                for (a, b) in found { #expect(abs(a.x - left) <= 1.5 && abs(b.x - right) <= 1.5, "\(a.x)...\(b.x)") }
            }
            #expect(spans(near: (left + right) / 2).isEmpty)
        }
    }

    /// Where a symbol drawn by `AccuracyTests.Picture` begins and ends along its rows: its first bar's leading edge
    /// and its last bar's trailing edge, in pixels.
    static func barsEnds(_ symbol: BarcodeSymbol, module: Int, margin: Int) -> (Double, Double) {
        let runs = symbol.darkRuns
        let left = Double(margin + (symbol.quietZone + (runs.map(\.start).min() ?? 0)) * module)
        let right = Double(margin + (symbol.quietZone + (runs.map { $0.start + $0.length }.max() ?? 0)) * module)
        return (left, right)
    }
}
