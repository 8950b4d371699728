import Foundation
import Testing

@testable import Barscope

struct ZBarScannerTests {
    /// A level EAN-13 of 3-px modules on a white label, only the modules in `shown` printed (the rest left blank).
    static func label(_ bars: [Bool], showing shown: Range<Int>) -> (pixels: [UInt8], width: Int, height: Int) {
        let (module, quiet, height) = (3, 40, 80)
        let width = bars.count * module + 2 * quiet
        var pixels = [UInt8](repeating: 235, count: width * height)
        for (m, dark) in bars.enumerated() where dark && shown.contains(m) {
            for y in 10..<height - 10 {
                for x in quiet + m * module..<quiet + (m + 1) * module { pixels[y * width + x] = 20 }
            }
        }
        return (pixels, width, height)
    }

    static func read(_ l: (pixels: [UInt8], width: Int, height: Int), with scanner: ZBarScanner) -> [String] {
        l.pixels.withUnsafeBytes { raw in
            scanner.scan(LumaImage(base: raw.baseAddress!, width: l.width, height: l.height, stride: l.width))
                .map(\.data)
        }
    }

    /// Each image is read on its own: ZBar's decoder keeps an EAN's half read in one scan for the next, so an image
    /// whose code is cut short (a third of its right half gone: the frame's edge, a finger) read as the whole code
    /// right after an image of all of it, on the same ZBar scanner, and as nothing on a fresh one. In video the
    /// image before is another frame (or, on a scanning worker, any frame it took before), so a read came from two
    /// frames, possibly of two codes, and a file scanned twice gave different reads.
    @Test func anEANHalfFromTheImageBeforeCompletesNothing() throws {
        let bars = try EAN13.symbol("7648003861711").modules[0]
        let whole = Self.label(bars, showing: 0..<bars.count)
        let cut = Self.label(bars, showing: 0..<75)
        #expect(Self.read(cut, with: ZBarScanner()) == [])
        let scanner = ZBarScanner()
        for _ in 0..<3 {
            #expect(Self.read(whole, with: scanner) == ["7648003861711"])
            #expect(Self.read(cut, with: scanner) == [], "the image before's half completed the cut code")
        }
    }
}
