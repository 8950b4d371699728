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
}
