import Foundation
import TestSupport
import Testing

/// `barscope run` on a real frame that ZBar misreads with a valid check digit (`Tests/Fixtures/disputed`), repeated
/// as a clip: the events carry the printed number, never the misread, and the end counts the reads not reported.
@Suite(.suiteLimit) struct DisputedReadsCLITests {
    static let fixture = DocumentedExamplesTests.root.appendingPathComponent(
        "Tests/Fixtures/disputed/upca-4_13-frame08.png"
    ).path

    /// Every frame, and tracks (appeared/lost). (`--tracked` reads nothing in this frame at all, before this change
    /// too: its sparse search lines miss the code; issue 43.)
    @Test(arguments: [["--every-frame"], []])
    func aMisreadTheDecodersDisputeIsNeverAnEvent(mode: [String]) throws {
        let r = try Tool.run(
            ["run", "--input", Self.fixture, "--frames", "5", "--viewfinder", "off", "--quiet", "--events", "-"] + mode)
        #expect(r.status == 0, "\(r.stderr)")
        let events = Tool.events(r.stdout)
        let texts = events.compactMap { $0["data"] as? String }
        #expect(!texts.isEmpty && texts.allSatisfy { $0 == "0059290522143" }, "\(mode): \(texts)")
        let eos = events.first { $0["event"] as? String == "eos" }
        #expect((eos?["unreported_reads"] as? Int ?? 0) >= 5, "\(mode): \(String(describing: eos))")
    }

    /// Tracked mode's search reads this code on its sparse lines but boxes a part of it: read again along its scan
    /// (`ScanStage.readAlong`), it is read in every frame.
    @Test func aCodeTheSearchBoxesInPartIsReadInEveryFrame() throws {
        let frame = DocumentedExamplesTests.root.appendingPathComponent(
            "Tests/Fixtures/disputed/upca-4_13-frame16.png"
        ).path
        let r = try Tool.run([
            "run", "--input", frame, "--frames", "5", "--tracked", "--every-frame", "--viewfinder", "off", "--quiet",
            "--events", "-",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let frames = Tool.events(r.stdout).filter { $0["data"] as? String == "0059290522143" }.compactMap {
            $0["frame"] as? Int
        }
        #expect(Set(frames) == Set(0..<5), "\(frames)")
    }

    /// A dispute made at half size is read again at full size, whose agreement settles it: the read is reported in
    /// every frame, not dropped as a misread the second decoder disputed in every frame.
    @Test func anEANInMotionThatTheHalfSizeCheckMisreadsIsReportedInEveryFrame() throws {
        let frame = DocumentedExamplesTests.root.appendingPathComponent(
            "Tests/Fixtures/disputed/ean13-motion-frame66.jpg"
        ).path
        let frames = 4
        let r = try Tool.run([
            "run", "--input", frame, "--frames", String(frames), "--every-frame", "--viewfinder", "off", "--quiet",
            "--events", "-",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let reads = Tool.events(r.stdout).filter { $0["event"] as? String == "detection" }
        #expect(reads.allSatisfy { $0["data"] as? String == "4661018082622" }, "\(reads)")
        #expect(Set(reads.compactMap { $0["frame"] as? Int }) == Set(0..<frames), "\(reads)")
        // The bars' corners in the cut, from the kit's truth: (55, 34), (421, 95), (399, 233), (32, 174).
        let truth = [[54.8, 34.2], [421.5, 94.5], [399.2, 233.4], [31.6, 173.5]]
        for read in reads {
            let polygon = (read["polygon"] as? [[Double]]) ?? []
            #expect(polygon.count == 4, "\(read)")
            for corner in truth {
                #expect(
                    polygon.contains { abs($0[0] - corner[0]) <= 4 && abs($0[1] - corner[1]) <= 4 },
                    "\(corner) in \(polygon)")
            }
        }
    }
}
