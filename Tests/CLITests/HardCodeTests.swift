import Barscope
import Foundation
import TestSupport
import Testing

/// The reader of hard 1D codes (`HardCodeReader`, `--hard-codes`) on the hard scene: small, blurred, faint codes of
/// every ZBar 1D symbology under sensor noise, past what ZBar reads on the frame. With it, `run --every-frame` reads
/// every symbol-frame it reads without it, and more: a real share of those ZBar missed, each where the code is,
/// with no false read of its own. (`scripts/bench hard` measures the same against the stock element at 1x and 2x,
/// and the cost.)
@Suite(.serialized, .suiteLimit) struct HardCodeTests {
    typealias Read = RecallTests.Read

    /// A seed no choice was made on (the reader's versions were chosen on seeds 1-3), 960x540: nine codes.
    static let clip: (path: String, truth: [Read: [Point]])? = {
        let path = Tool.folder.appendingPathComponent("hard-codes-21.mp4").path
        let truthPath = Tool.folder.appendingPathComponent("hard-codes-21.jsonl").path
        guard
            let made = try? Tool.run([
                "generate", path, "--scene", "hard", "--seed", "21", "--size", "960x540", "--frames", "45",
                "--truth", truthPath,
            ]), made.status == 0, let text = try? String(contentsOfFile: truthPath, encoding: .utf8)
        else { return nil }
        var truth: [Read: [Point]] = [:]
        for line in text.split(separator: "\n") {
            guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let frame = o["frame"] as? Int, let codes = o["codes"] as? [[String: Any]]
            else { continue }
            for c in codes {
                guard let t = c["type"] as? String, let d = c["data"] as? String,
                    let polygon = c["polygon"] as? [[Double]]
                else { continue }
                truth[Read(frame: frame, type: t, data: d)] = polygon.map { Point($0[0], $0[1]) }
            }
        }
        return (path, truth)
    }()

    static func run(_ path: String, hard: String) throws -> [Read: [Point]] {
        let r = try Tool.run(
            ["run", path, "--every-frame", "--viewfinder", "off", "--quiet", "--hard-codes", hard], timeout: 600)
        #expect(r.status == 0, "\(r.stderr)")
        var reads: [Read: [Point]] = [:]
        for line in r.stdout.split(separator: "\n") {
            guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                o["event"] as? String == "detection", let frame = o["frame"] as? Int, let t = o["type"] as? String,
                let d = o["data"] as? String, let polygon = o["polygon"] as? [[Double]]
            else { continue }
            reads[Read(frame: frame, type: t, data: d)] = polygon.map { Point($0[0], $0[1]) }
        }
        return reads
    }

    @Test func hardCodesAreReadWhereTheyAreWithNoFalseRead() throws {
        let clip = try #require(Self.clip, "the hard-codes clip could not be generated")
        let off = try Self.run(clip.path, hard: "off")
        let on = try Self.run(clip.path, hard: "on")
        let truth = Set(clip.truth.keys)
        let missedByZBar = truth.subtracting(off.keys)
        let rescued = missedByZBar.intersection(on.keys)
        let share = Double(rescued.count) / Double(max(1, missedByZBar.count))
        print(
            "hard codes: \(truth.count) symbol-frames, ZBar path \(truth.intersection(off.keys).count), "
                + "rescued \(rescued.count) of the \(missedByZBar.count) it missed (\(String(format: "%.1f", 100 * share)) %)"
        )
        // Never less than without it.
        let lost = truth.intersection(off.keys).subtracting(on.keys)
        #expect(lost.isEmpty, "read without the hard-code reader, not with it: \(lost.sorted { $0.frame < $1.frame })")
        // A real share of what ZBar missed: 27.3-27.9 % measured (see the print; the workers' order moves it a
        // little). One frame at a time it read 24.8 %: the bound fails a memory that never matches.
        #expect(missedByZBar.count > 100, "the scene should be past ZBar: it missed \(missedByZBar.count)")
        #expect(share >= 0.25, "rescued \(rescued.count) of \(missedByZBar.count)")
        // No false read of its own.
        let falseReads = Set(on.keys).subtracting(off.keys).subtracting(truth)
        #expect(falseReads.isEmpty, "false reads: \(falseReads.sorted { $0.frame < $1.frame })")
        // Each where the code is: every corner within 3 px of the bars' outline, in the truth's order.
        var misplaced: [String] = []
        for r in rescued {
            guard let got = on[r], let want = clip.truth[r], got.count == 4, want.count == 4 else {
                misplaced.append("\(r): \(on[r]?.count ?? 0) corners")
                continue
            }
            let errors = zip(got, want).map { $0.distance(to: $1) }
            if errors.max()! > 3 {
                misplaced.append(
                    "\(r): corners off by \(errors.map { String(format: "%.1f", $0) }) px, \(got) for \(want)")
            }
        }
        #expect(
            Double(misplaced.count) <= 0.1 * Double(max(1, rescued.count)),
            "\(misplaced.count) of \(rescued.count) misplaced: \(misplaced.prefix(10))")
    }
}
