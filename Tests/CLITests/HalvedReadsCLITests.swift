import Foundation
import TestSupport
import Testing

/// `barscope run` on real frames that ZBar reads only at half size (`Tests/Fixtures/halved`), repeated as a clip:
/// a frame where the full-size read finds nothing is read again halved, then halved and binarized, as a still's
/// second passes are.
@Suite(.suiteLimit) struct HalvedReadsCLITests {
    /// Read only halved.
    @Test func aCodeEnlargedPastItsSharpnessIsReadInEveryFrame() throws {
        // The box is the code's (about x 86-420, y 86-320 of the cut), in full-size pixels, not the half image's.
        try expectReadInEveryFrame("upce-3_05-frame40.png", "0049000006582", x: 60...450, y: 60...350)
    }

    /// Read only by the second of the two: halved and binarized against the local mean.
    @Test func aFadedCodeInPerspectiveIsReadInEveryFrame() throws {
        // The bars run from about (315, 290) to (920, 470) in this frame, above the printed digits (y 500 to 640).
        try expectReadInEveryFrame("ean13-2_26-frame35.jpg", "9784872348880", x: 290...945, y: 240...595)
    }

    /// The fixture repeated as a 4-frame clip, every frame: `text` in each frame and nothing else, each box a
    /// quadrilateral inside the given pixels.
    private func expectReadInEveryFrame(
        _ fixture: String, _ text: String, x: ClosedRange<Double>, y: ClosedRange<Double>
    ) throws {
        let frame = DocumentedExamplesTests.root.appendingPathComponent("Tests/Fixtures/halved/" + fixture).path
        let r = try Tool.run([
            "run", "--input", frame, "--frames", "4", "--every-frame", "--viewfinder", "off", "--quiet", "--events",
            "-",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let reads = Tool.events(r.stdout).filter { $0["event"] as? String == "detection" }
        #expect(reads.allSatisfy { $0["data"] as? String == text }, "\(reads)")
        #expect(Set(reads.compactMap { $0["frame"] as? Int }) == Set(0..<4), "\(reads)")
        for read in reads {
            let polygon = (read["polygon"] as? [[Double]]) ?? []
            #expect(polygon.count == 4, "\(read)")
            #expect(polygon.allSatisfy { x.contains($0[0]) && y.contains($0[1]) }, "\(polygon)")
        }
    }
}
