import Foundation
import TestSupport
import Testing

/// A recording is evidence: scanned again, a file must give the same events, whatever the number of scanning
/// threads (another machine's cores) and however they happen to interleave.
@Suite(.serialized, .suiteLimit) struct DeterminismTests {
    /// The events of one scan, less what says how it ran rather than what it read (the pipeline's state changes,
    /// which the bus reports in its own time, and the end's latency figures).
    static func reads(_ clip: String, _ mode: [String], threads: Int) throws -> [String] {
        let r = try Tool.run(["run", clip, "--viewfinder", "off", "--quiet", "--scan-threads", "\(threads)"] + mode)
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdout.split(separator: "\n").map(String.init).filter {
            !$0.contains(#""event":"state""#) && !$0.contains(#""event":"eos""#)
        }
    }

    /// Six codes bouncing in their cells, coming into view one after another (EAN-13 among them, whose halves ZBar
    /// once joined across frames): every frame, tracked (rescans built on the codes known from the frames before)
    /// and with the hard-code memory (bars averaged over the frames before).
    @Test(arguments: [["--every-frame"], ["--tracked"], ["--every-frame", "--hard-codes", "on"]])
    func aFileScannedAgainGivesTheSameEvents(mode: [String]) throws {
        let clip = Tool.folder.appendingPathComponent("determinism-mix.mp4").path
        if !FileManager.default.fileExists(atPath: clip) {
            let g = try Tool.run(["generate", clip, "--scene", "mix", "--frames", "90", "--appear-every", "10"])
            try #require(g.status == 0, "\(g.stderr)")
        }
        let first = try Self.reads(clip, mode, threads: 1)
        #expect(first.filter { $0.contains(#""data":"#) }.count >= 6, "too little read: \(first.prefix(3))")
        for threads in [2, 2, 4] {
            let again = try Self.reads(clip, mode, threads: threads)
            let differing = zip(first, again).filter { $0 != $1 }
            let same = again == first
            #expect(
                same,
                "\(mode), \(threads) threads: \(again.count) events against \(first.count); first difference: \(differing.first.map { "\($0.0)\n  became \($0.1)" } ?? "(one is longer)")"
            )
        }
    }
}
