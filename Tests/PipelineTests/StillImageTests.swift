import Barscope
import Foundation
import TestSupport
import Testing

/// The stock `zbar` element's own check (gst-plugins-bad tests/check/elements/zbar.c), reproduced: an EAN-13
/// image of 9876543210128 gives type EAN-13, that symbol and a quality of at least 90 from `barscope`'s still
/// path. (The same assertions against the stock element itself, field by field: ElementTests.)
@Suite(.serialized, .suiteLimit) struct StillImageTests {
    static func eanImage() throws -> String {
        let path = Media.folder.appendingPathComponent("ean13-9876543210128.png").path
        if !FileManager.default.fileExists(atPath: path) {
            try DemoClip.writePNG(try EAN13.symbol("987654321012"), to: path, module: 3)
        }
        return path
    }

    @Test func barscopeReadsTheStockElementsTestImage() throws {
        let found = try ImageScanner().scan(path: try Self.eanImage())
        #expect(found.count == 1)
        let d = try #require(found.first)
        #expect(d.type == "EAN-13")
        #expect(d.data == "9876543210128")
        #expect(d.quality >= 90)
        // Drawn at 20 px margin + 11 quiet modules × 3 px: the bars start at x = 53 and run 95 × 3 = 285 px.
        #expect(abs(d.bounds.x - 53) <= 2 && abs(d.bounds.width - 285) <= 3, "\(d.bounds)")
    }

    @Test func notAnImageIsABadInputNamingTheFile() throws {
        let path = Media.folder.appendingPathComponent("text.png").path
        try "this is text, not a picture\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: BarscopeError.self) { try ImageScanner().scan(path: path) }
        do {
            _ = try ImageScanner().scan(path: path)
        } catch let e as BarscopeError {
            #expect(e.description.hasPrefix("\(path): not an image"), "\(e)")
            #expect(e.exitCode == 2)
        }
    }
}
