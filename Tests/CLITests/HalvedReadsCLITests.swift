import Foundation
import TestSupport
import Testing

/// `barscope run` on real frames that ZBar reads only at half size (`Tests/Fixtures/halved`), repeated as a clip:
/// a frame where the full-size read finds nothing is read again halved, then halved and stretched, then halved and
/// binarized, as a still's second passes are.
@Suite(.suiteLimit) struct HalvedReadsCLITests {
    /// Read only halved.
    @Test func aCodeEnlargedPastItsSharpnessIsReadInEveryFrame() throws {
        // The box is the code's (about x 86-440, its bars fading out toward the cut's top edge and ending at y 320),
        // in full-size pixels, not the half image's.
        try expectReadInEveryFrame("upce-3_05-frame40.png", "0049000006582", x: 60...450, y: 0...350)
    }

    /// Read only by the third of them: halved and binarized against the local mean.
    @Test func aFadedCodeInPerspectiveIsReadInEveryFrame() throws {
        // The bars run from about (315, 290) to (920, 470) in this frame, above the printed digits (y 500 to 640).
        try expectReadInEveryFrame("ean13-2_26-frame35.jpg", "9784872348880", x: 290...945, y: 240...595)
    }

    /// Read only by the second of the three: halved and stretched (grey bars on a grey label, 2 % of the levels
    /// at each end left out). Its box is not yet right (tilted some 17 degrees off the bars in this frame): only its
    /// middle is checked, on the code's (about (660, 260)).
    @Test func aGreyOnGreyCodeIsReadInEveryFrame() throws {
        try expectReadInEveryFrame("upca-2_41-frame80.jpg", "0012546619592") { polygon in
            let x = polygon.map { $0[0] }.reduce(0, +) / Double(polygon.count)
            let y = polygon.map { $0[1] }.reduce(0, +) / Double(polygon.count)
            return abs(x - 660) <= 30 && abs(y - 260) <= 30
        }
    }

    /// Tracked mode: its search, which finds nothing at full size, reads the frame again as every-frame mode does;
    /// the frames between searches find the code where it was, at half size.
    @Test func trackedModeReadsACodeEnlargedPastItsSharpnessInEveryFrame() throws {
        try expectReadInEveryFrame(
            "upce-3_05-frame40.png", "0049000006582", x: 60...450, y: 0...350, frames: 8, options: ["--tracked"])
    }

    /// The fixture repeated as a clip of `frames`, every frame: `text` in each frame and nothing else, each box a
    /// quadrilateral inside the given pixels.
    private func expectReadInEveryFrame(
        _ fixture: String, _ text: String, x: ClosedRange<Double>, y: ClosedRange<Double>, frames: Int = 4,
        options: [String] = []
    ) throws {
        try expectReadInEveryFrame(fixture, text, frames: frames, options: options) { polygon in
            polygon.allSatisfy { x.contains($0[0]) && y.contains($0[1]) }
        }
    }

    /// The same, each box a quadrilateral for which `boxed` holds.
    private func expectReadInEveryFrame(
        _ fixture: String, _ text: String, frames: Int = 4, options: [String] = [],
        boxed: ([[Double]]) -> Bool
    ) throws {
        let frame = DocumentedExamplesTests.root.appendingPathComponent("Tests/Fixtures/halved/" + fixture).path
        let r = try Tool.run(
            [
                "run", "--input", frame, "--frames", String(frames), "--every-frame", "--viewfinder", "off", "--quiet",
                "--events", "-",
            ] + options)
        #expect(r.status == 0, "\(r.stderr)")
        let reads = Tool.events(r.stdout).filter { $0["event"] as? String == "detection" }
        #expect(reads.allSatisfy { $0["data"] as? String == text }, "\(reads)")
        #expect(Set(reads.compactMap { $0["frame"] as? Int }) == Set(0..<frames), "\(reads)")
        for read in reads {
            let polygon = (read["polygon"] as? [[Double]]) ?? []
            #expect(polygon.count == 4, "\(read)")
            #expect(polygon.count == 4 && boxed(polygon), "\(polygon)")
        }
    }
}
