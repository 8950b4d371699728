import Barscope
import CBarscope
import Foundation
import TestSupport
import Testing

/// The header reader that refuses oversized still images must read the size real encoders write, in every
/// format the still-image path takes; a wrong reading would refuse good images or let huge ones through.
@Suite(.suiteLimit) struct ImageHeaderTests {
    @Test(arguments: ["pngenc", "jpegenc", "webpenc", "avenc_bmp", "avenc_tiff"])
    func readsTheSizeEncodersWrite(encoder: String) throws {
        let path = Media.folder.appendingPathComponent("header-\(encoder).img").path
        let pipeline = try Pipeline(
            launch: "videotestsrc num-buffers=1 ! video/x-raw,width=333,height=217 ! videoconvert ! \(encoder) "
                + "! filesink name=sink")
        bs_set_string(try #require(pipeline.child("sink")), "location", path)
        try pipeline.playToEnd(timeoutSeconds: 20)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(ImageHeader.size(of: bytes) == Size(width: 333, height: 217), "\(encoder)")
        // Cut anywhere inside the header: no size, never a crash.
        for n in 0..<min(bytes.count, 64) { _ = ImageHeader.size(of: Array(bytes.prefix(n))) }
        try ImageHeader.checkSize(ofFileAt: path)
    }
}
