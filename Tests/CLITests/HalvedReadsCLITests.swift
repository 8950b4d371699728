import Foundation
import TestSupport
import Testing

/// `barscope run` on a real frame that ZBar reads only at half size (`Tests/Fixtures/halved`), repeated as a clip:
/// a frame where the full-size read finds nothing is read again halved, as a still's first second pass is.
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
}
