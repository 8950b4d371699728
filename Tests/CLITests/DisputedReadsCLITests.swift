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
    /// A UPC-A whose left half, between its left and centre guards, reads as a UPC-E (0008700000030 in its EAN-13
    /// form, by both decoders): a part of the UPC-A, for no quiet zone lies past its end guard on any line. The still
    /// (`scan`, which reported both before) and the clip, every frame and tracked, report the UPC-A alone.
    @Test(arguments: [["scan", "--json", "--engine", "zbar"], ["run", "--every-frame"], ["run", "--tracked"]])
    func aUPCEReadInAUPCAsBarsIsNotReported(command: [String]) throws {
        let still = DocumentedExamplesTests.root.appendingPathComponent(
            "Tests/Fixtures/disputed/upca-5_27-still.jpg"
        ).path
        let arguments =
            command[0] == "scan"
            ? command + [still]
            : command + ["--input", still, "--frames", "5", "--viewfinder", "off", "--quiet", "--events", "-"]
        let r = try Tool.run(arguments)
        #expect(r.status == 0, "\(r.stderr)")
        let texts = Tool.events(r.stdout).compactMap { $0["data"] as? String }
        #expect(!texts.isEmpty && texts.allSatisfy { $0 == "0625034201058" }, "\(command): \(texts)")
    }
}
