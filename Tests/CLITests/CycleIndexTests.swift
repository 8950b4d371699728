import Foundation
import TestSupport
import Testing

/// Read cycles' results in the sightings index: every `cycle` event of a run is a row (its result, label, codes,
/// when, and where in the recording it opened), found by `search --cycles`.
@Suite(.suiteLimit)
struct CycleIndexTests {
    @Test func everyCycleOfARunIsInTheIndex() throws {
        let folder = try SightingsTests.folder("cycle-index").path
        let index = folder + "/index.sqlite"
        let events = folder + "/events.jsonl"
        // The conveyor's parcels: good, noread, multiple, mismatch, again.
        let run = try Tool.run([
            "run", "demo", "--scene", "conveyor", "--frames", "600", "--size", "640x360", "--cycles", "motion",
            "--expect", "^[0-9]{13}$", "--expect-count", "1", "--record", folder + "/dock.mp4", "--index", index,
            "--camera", "dock1", "--events", events, "--quiet",
        ])
        try #require(run.status == 0, "\(run.stderr)")
        let cycles = SightingsTests.rows(try String(contentsOfFile: events, encoding: .utf8)).filter {
            $0["event"] as? String == "cycle"
        }
        try #require(Set(cycles.compactMap { $0["result"] as? String }) == ["good", "noread", "multiple", "mismatch"])
        let found = try Tool.run(["search", "--cycles", "--index", index, "--json"])
        #expect(found.status == 0, "\(found.stderr)")
        let rows = Dictionary(
            SightingsTests.rows(found.stdout).map { (($0["cycle"] as? Int) ?? -1, $0) }, uniquingKeysWith: { a, _ in a }
        )
        #expect(rows.count == cycles.count, "\(cycles.count) cycle events, \(rows.count) rows")
        for c in cycles {
            let n = c["cycle"] as? Int ?? -1
            guard let row = rows[n] else {
                Issue.record("cycle \(n) is not in the index")
                continue
            }
            #expect(row["result"] as? String == c["result"] as? String, "cycle \(n): \(row)")
            let read = (c["codes"] as? [[String: Any]] ?? []).map { "\($0["type"] ?? ""):\($0["data"] ?? "")" }
            let stored = (row["codes"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
            #expect(stored == read, "cycle \(n): \(stored) against \(read)")
            #expect(row["camera"] as? String == "dock1" && row["recording"] as? String == folder + "/dock.mp4")
            // Opened where the cycle's stream time says, in the recording (within a frame).
            let start = Double(c["start_pts_ns"] as? Int ?? 0) / 1e9
            #expect(abs((row["offset_s"] as? Double ?? -1) - start) <= 1.0 / 30, "cycle \(n): \(row)")
        }
        let noreads = cycles.filter { $0["result"] as? String == "noread" }.count
        let narrowed = try Tool.run(["search", "--cycles", "--result", "noread", "--index", index])
        #expect(narrowed.status == 0 && narrowed.stdout.split(separator: "\n").count == noreads, "\(narrowed.stdout)")
        #expect(try Tool.run(["search", "--cycles", "--label", "none such", "--index", index]).status == 4)
        for (args, message) in [
            (["search", "--cycles", "--result", "bad", "--index", index], "--result 'bad'"),
            (["search", "--result", "good", "--index", index], "need --cycles"),
            (["search", "x", "--cycles", "--index", index], "--cycles takes no code"),
        ] {
            let r = try Tool.run(args)
            #expect(r.status == 2 && r.stderr.contains(message), "\(args): \(r.stderr)")
        }
    }
}
