import Foundation
import TestSupport
import Testing

/// `barscope run` on real frames that ZBar reads only at half size (`Tests/Fixtures/halved`), repeated as a clip:
/// a frame where the full-size read finds nothing is read again halved, then halved and binarized, as a still's
/// second passes are.
@Suite(.suiteLimit) struct HalvedReadsCLITests {
    @Test func aCodeEnlargedPastItsSharpnessIsReadInEveryFrame() throws {
        let frame = DocumentedExamplesTests.root.appendingPathComponent(
            "Tests/Fixtures/halved/upce-3_05-frame40.png"
        ).path
        let r = try Tool.run([
            "run", "--input", frame, "--frames", "4", "--every-frame", "--viewfinder", "off", "--quiet", "--events",
            "-",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let reads = r.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["event"] as? String == "detection" }
        #expect(reads.allSatisfy { $0["data"] as? String == "0049000006582" }, "\(reads)")
        #expect(Set(reads.compactMap { $0["frame"] as? Int }) == Set(0..<4), "\(reads)")
        // The box is the code's (about x 86-420, y 86-320 of the cut), in full-size pixels, not the half-size image's.
        for read in reads {
            let polygon = (read["polygon"] as? [[Double]]) ?? []
            #expect(polygon.count == 4, "\(read)")
            #expect(polygon.allSatisfy { $0[0] > 60 && $0[0] < 450 && $0[1] > 60 && $0[1] < 350 }, "\(polygon)")
        }
    }

    /// Read only by the second of the two: halved and binarized against the local mean.
    @Test func aFadedCodeInPerspectiveIsReadInEveryFrame() throws {
        let frame = DocumentedExamplesTests.root.appendingPathComponent(
            "Tests/Fixtures/halved/ean13-2_26-frame35.jpg"
        ).path
        let r = try Tool.run([
            "run", "--input", frame, "--frames", "4", "--every-frame", "--viewfinder", "off", "--quiet", "--events",
            "-",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let reads = r.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["event"] as? String == "detection" }
        #expect(reads.allSatisfy { $0["data"] as? String == "9784872348880" }, "\(reads)")
        #expect(Set(reads.compactMap { $0["frame"] as? Int }) == Set(0..<4), "\(reads)")
        // The bars run from about (315, 290) to (920, 470) in this frame, above the printed digits (y 500 to 640).
        for read in reads {
            let polygon = (read["polygon"] as? [[Double]]) ?? []
            #expect(polygon.count == 4, "\(read)")
            #expect(polygon.allSatisfy { $0[0] > 290 && $0[0] < 945 && $0[1] > 240 && $0[1] < 595 }, "\(polygon)")
        }
    }
}
