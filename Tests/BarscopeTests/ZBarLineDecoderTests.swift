import CZBar
import Testing

@testable import Barscope

/// ZBar's decoder run along one line: where a read's characters begin and end on the line it was read on.
@Suite struct ZBarLineDecoderTests {
    /// An ITF of 2-px modules: the read's ends on its row are the first bar's leading edge and the last bar's
    /// trailing edge, whichever way it was read (ZBar places a read at the end where its scan finished: the right
    /// end left to right, the left end right to left), and on a row whose first bar is faint (170 on 255; ZBar,
    /// scanning from the left, still decodes it). Another text, or a row past the bars' ends, gives nothing.
    @Test func aReadsEndsOnItsLineAreItsFirstAndLastBars() {
        let symbol = AccuracyTests.itf("12345670")
        let (module, margin) = (2, 20)
        var picture = AccuracyTests.Picture(symbol, module: module, margin: margin)
        let runs = symbol.darkRuns
        let left = Double(margin + (symbol.quietZone + (runs.map(\.start).min() ?? 0)) * module)
        let right = Double(margin + (symbol.quietZone + (runs.map { $0.start + $0.length }.max() ?? 0)) * module)
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
            #expect(span(Point(right, 5), bytes) == nil)
        }
    }
}
