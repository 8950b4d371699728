import Barscope
import CBarscope
import CGStreamer
import Foundation
import Testing

/// The stock `zbar` element's own check (gst-plugins-bad tests/check/elements/zbar.c), reproduced: an EAN-13
/// image of 9876543210128 gives type EAN-13, that symbol and a quality of at least 90, from `barscope`'s still
/// path and from the stock element on the very same image.
@Suite(.serialized) struct StillImageTests {
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

    @Test func stockZbarElementAgreesOnTheSameImage() throws {
        try GStreamer.require(["zbar", "pngdec"])
        let pipeline = try Pipeline(
            launch: "filesrc name=src ! pngdec ! videoconvert ! video/x-raw,format=I420 ! zbar ! fakesink")
        bs_set_string(try #require(pipeline.child("src")), "location", try Self.eanImage())
        var messages: [(type: String, symbol: String, quality: Int32, hasFrame: Bool)] = []
        pipeline.setState(GST_STATE_PLAYING)
        let bus = gst_element_get_bus(pipeline.element)!
        defer { gst_object_unref(bus) }
        loop: while let msg = gst_bus_timed_pop(bus, 10_000_000_000) {
            defer { gst_message_unref(msg) }
            switch bs_message_type(msg) {
            case GST_MESSAGE_ELEMENT:
                guard let s = gst_message_get_structure(msg), String(cString: gst_structure_get_name(s)) == "barcode"
                else { continue }
                var quality: Int32 = 0
                gst_structure_get_int(s, "quality", &quality)
                messages.append((
                    String(cString: gst_structure_get_string(s, "type")),
                    String(cString: gst_structure_get_string(s, "symbol")), quality,
                    gst_structure_has_field(s, "frame") != 0))
            case GST_MESSAGE_EOS, GST_MESSAGE_ERROR: break loop
            default: continue
            }
        }
        pipeline.setState(GST_STATE_NULL)
        #expect(messages.count == 1)
        #expect(messages.first?.type == "EAN-13")
        #expect(messages.first?.symbol == "9876543210128")
        #expect((messages.first?.quality ?? 0) >= 90)
        #expect(messages.first?.hasFrame == false)
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
