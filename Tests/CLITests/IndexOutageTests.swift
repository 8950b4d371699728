import Foundation
import TestSupport
import Testing

/// The index's database stopped for 20 seconds in the middle of a live run, and started again on the same port: the
/// run says so (warning events), keeps scanning, and every sighting it reported is in the table at the end.
@Suite(.serialized, .suiteLimit) struct IndexOutageTests {
    struct Appeared: Hashable {
        var track: Int
        var code: String
    }

    static func appeared(_ text: String) -> [Appeared] {
        text.split(separator: "\n").compactMap { line -> Appeared? in
            guard line.contains(#""event":"appeared""#),
                let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let track = o["track"] as? Int, let code = o["data"] as? String
            else { return nil }
            return Appeared(track: track, code: code)
        }
    }

    @Test(.disabled(if: Postgres.missing != nil, "\(Postgres.missing ?? "")"))
    func aTwentySecondOutageLosesNoSighting() throws {
        let pg = try Postgres()
        let folder = try SightingsTests.folder("index-outage")
        let events = folder.appendingPathComponent("live.jsonl").path
        // The conveyor brings a parcel into view every few seconds: sightings are made while the database is away.
        let p = Process()
        p.executableURL = Tool.url
        p.arguments = [
            "run", "demo", "--scene", "conveyor", "--live", "--frames", "1200", "--size", "640x360", "--index",
            pg.url, "--camera", "outage", "--events", events, "--quiet",
        ]
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        func text() -> String { (try? String(contentsOfFile: events, encoding: .utf8)) ?? "" }
        func rows() -> Int {
            (try? pg.psql("SELECT count(*) FROM sightings WHERE camera = 'outage'")).flatMap { Int($0) } ?? -1
        }
        func wait(_ what: String, seconds: Double = 30, _ condition: () -> Bool) throws {
            let came = pollUntil(seconds, condition)
            try #require(came, "\(what) did not happen in \(seconds) s: \(text().suffix(400))")
        }
        try wait("a first sighting in the index") { rows() > 0 }
        pg.stop()
        let stopped = Date()
        try wait("a warning that sightings wait") { text().contains("sightings wait") }
        let before = Self.appeared(text()).count
        // The outage lasts 20 s, the run scanning meanwhile (and reporting sightings the index cannot take).
        try wait("20 s of outage with the run going on", seconds: 25) {
            Date().timeIntervalSince(stopped) >= 20 || !p.isRunning
        }
        #expect(p.isRunning, "the run ended during the outage")
        let during = Self.appeared(text()).count - before
        #expect(during >= 1, "no sighting was made while the database was away")
        try pg.start()
        try wait("the sightings written again", seconds: 20) { text().contains("written again") }
        let waited = Date().timeIntervalSince(stopped)
        try wait("the run's end", seconds: 60) { !p.isRunning }
        #expect(p.terminationStatus == 0)

        let seen = Set(Self.appeared(text()))
        let stored = try pg.psql("SELECT track, code FROM sightings WHERE camera = 'outage'").split(separator: "\n")
            .compactMap { line -> Appeared? in
                let parts = line.split(separator: "|", maxSplits: 1)
                guard parts.count == 2, let track = Int(parts[0]) else { return nil }
                return Appeared(track: track, code: String(parts[1]))
            }
        #expect(seen.count >= 3, "\(seen.count) sightings")
        #expect(Set(stored) == seen && stored.count == seen.count, "missing: \(seen.subtracting(stored))")
        print("outage of \(String(format: "%.1f", waited)) s: \(during) sightings made during it, \(seen.count) in all")
    }
}
