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

    /// The same rows from a service: `GET /v1/cycles` (JSON and CSV, narrowed by result), each cycle's recording in
    /// byte ranges (`GET /v1/cycles/recording`), bad parameters named with 400.
    @Test func cyclesAreServedOverHTTP() throws {
        let folder = try SightingsTests.folder("cycle-http").path
        let service = try Service()
        defer { service.expectCleanExit() }
        let (id, cycles) = try service.completedConveyor(in: folder)
        try #require(Set(cycles.compactMap { $0["result"] as? String }) == ["good", "noread", "multiple", "mismatch"])
        // The index's writer may still be writing the last batch when the instance has completed.
        var rows: [[String: Any]] = []
        try #require(
            waitUntil(10, "every cycle of \(id) listed", seen: { "\(rows.count) rows of \(cycles.count)" }) {
                rows =
                    try service.request("GET", "/v1/cycles?instance=\(id)&limit=1000").object["cycles"]
                    as? [[String: Any]] ?? []
                return rows.count == cycles.count
            })
        let byNumber = Dictionary(rows.map { (($0["cycle"] as? Int) ?? -1, $0) }, uniquingKeysWith: { a, _ in a })
        for c in cycles {
            let n = c["cycle"] as? Int ?? -1
            #expect(byNumber[n]?["result"] as? String == c["result"] as? String, "cycle \(n): \(byNumber[n] ?? [:])")
        }
        let opened = rows.compactMap { $0["opened"] as? String }
        #expect(opened == opened.sorted(by: >), "not newest first: \(opened)")

        let noreads = cycles.filter { $0["result"] as? String == "noread" }.count
        let narrowed =
            try service.request("GET", "/v1/cycles?instance=\(id)&result=noread").object["cycles"]
            as? [[String: Any]] ?? []
        #expect(narrowed.count == noreads && narrowed.allSatisfy { $0["result"] as? String == "noread" }, "\(narrowed)")
        let csv = try service.request("GET", "/v1/cycles?instance=\(id)&format=csv")
        #expect(csv.headers["content-type"]?.hasPrefix("text/csv") == true, "\(csv.headers)")
        let lines = csv.text.split(separator: "\r\n")
        #expect(
            lines.first == "opened,closed,result,label,camera,codes,recording,offset_s"
                && lines.count == cycles.count + 1, "\(csv.text)")

        // A cycle's recording, the bytes of the file it names.
        let row = try #require(rows.first { $0["recording"] != nil }, "no cycle with a recording: \(rows)")
        let run = try #require(row["run"] as? String)
        let number = try #require(row["cycle"] as? Int)
        let file = try Data(contentsOf: URL(fileURLWithPath: folder + "/dock.mp4"))
        let piece = try service.request(
            "GET", "/v1/cycles/recording?run=\(run)&cycle=\(number)", headers: ["Range": "bytes=100-1123"])
        #expect(piece.status == 206 && piece.body == file[100..<1124], "\(piece.status) \(piece.body.count) bytes")
        #expect(piece.headers["content-range"] == "bytes 100-1123/\(file.count)", "\(piece.headers)")

        for (path, status, message) in [
            ("/v1/cycles?result=fine", 400, "result 'fine'"), ("/v1/cycles?limit=0", 400, "limit '0'"),
            ("/v1/cycles?from=yesterday", 400, "time 'yesterday'"),
            ("/v1/cycles/recording?run=\(run)", 400, "run and cycle"),
            ("/v1/cycles/recording?run=\(run)&cycle=9999", 404, "no recording of cycle \(run)/9999"),
        ] {
            let r = try service.request("GET", path)
            #expect(
                r.status == status && (r.object["error"] as? String)?.contains(message) == true,
                "\(path): \(r.status) \(r.text)")
        }
    }
}
