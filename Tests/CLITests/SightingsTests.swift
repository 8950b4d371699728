import Barscope
import Foundation
import TestSupport
import Testing

/// The sightings index: `run --index` and `serve` write one row per sighting, `search` and `GET /v1/sightings` find
/// them, the recording at a sighting's offset shows the code, a searched text is data, a foreign file is never
/// touched, PostgreSQL is shared by several runs and an outage of it loses nothing.
@Suite(.serialized, .suiteLimit) struct SightingsTests {
    static func folder(_ name: String) throws -> URL {
        let f = Tool.folder.appendingPathComponent("\(name)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: f, withIntermediateDirectories: true)
        return f
    }

    /// A clip whose codes come into view one after another (frames 0, 30, 60), and its truth.
    static func staggeredClip(_ folder: URL) throws -> (clip: String, codes: [String: Int]) {
        let clip = folder.appendingPathComponent("dock.mp4").path
        let truth = folder.appendingPathComponent("truth.jsonl").path
        let made = try Tool.run([
            "generate", clip, "--scene", "mix", "--codes", "3", "--appear-every", "30", "--frames", "120", "--size",
            "640x360", "--speed", "1", "--seed", "5", "--truth", truth,
        ])
        try #require(made.status == 0, "\(made.stderr)")
        // The first frame each code is in view, from the truth.
        var first: [String: Int] = [:]
        for line in try String(contentsOfFile: truth, encoding: .utf8).split(separator: "\n") {
            guard let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let frame = o["frame"] as? Int, let symbols = o["codes"] as? [[String: Any]]
            else { continue }
            for s in symbols {
                if let data = s["data"] as? String, first[data] == nil { first[data] = frame }
            }
        }
        try #require(first.count == 3, "\(first)")
        return (clip, first)
    }

    static func rows(_ json: String) -> [[String: Any]] {
        json.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// A file scanned with --index and --record: each code's sighting is found, its first sight is the file's start
    /// plus the frame's time, and the recording's frame at the sighting's offset shows the code (decoded).
    @Test func aRecordedSightingIsFoundAndItsMomentShowsTheCode() throws {
        let folder = try Self.folder("sightings")
        let (clip, first) = try Self.staggeredClip(folder)
        let index = folder.appendingPathComponent("index.sqlite").path
        let recording = folder.appendingPathComponent("rec.mp4").path
        let run = try Tool.run([
            "run", clip, "--viewfinder", "off", "--record", recording, "--index", index, "--camera", "dock1", "--start",
            "2026-12-01T10:00:00Z", "--events", folder.appendingPathComponent("events.jsonl").path,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("sightings indexed"), "\(run.stderr)")
        let found = try Tool.run(["search", "--index", index, "--json", "--camera", "dock1"])
        #expect(found.status == 0, "\(found.stderr)")
        let rows = Self.rows(found.stdout)
        let byCode = Dictionary(rows.map { (($0["code"] as? String) ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        // Frames of the annotated recording, to look at the moment of each sighting.
        let frames = folder.appendingPathComponent("frames")
        try FileManager.default.createDirectory(at: frames, withIntermediateDirectories: true)
        let split = try Tool.shellResult([
            "gst-launch-1.0", "-q", "filesrc", "location=\(recording)", "!", "decodebin", "!", "videoconvert", "!",
            "pngenc", "!", "multifilesink", "location=\(frames.path)/f-%05d.png",
        ])
        #expect(split.status == 0, "\(split.stderr)")
        let start = ISO8601DateFormatter().date(from: "2026-12-01T10:00:00Z")!
        for (code, frame) in first {
            guard let row = byCode[code] else {
                Issue.record("\(code) (in view from frame \(frame)) has no sighting: \(found.stdout)")
                continue
            }
            // First seen: the given start plus the frame's time (the clip is 30 frames/s), within two frames.
            let f = ISO8601DateFormatter()
            f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let seen = try #require(f.date(from: row["first_seen"] as? String ?? ""))
            #expect(abs(seen.timeIntervalSince(start) - Double(frame) / 30) <= 2.0 / 30, "\(code): \(row)")
            #expect((row["recording"] as? String) == recording)
            let offset = try #require(row["offset_s"] as? Double)
            #expect(abs(offset - Double(frame) / 30) <= 2.0 / 30, "\(code): offset \(offset), in view at \(frame)")
            // The recording's frame at the offset (and the next few: a code is first read as it comes into view)
            // shows the code.
            let n = Int((offset * 30).rounded())
            let pngs = (n...(n + 3)).map { frames.appendingPathComponent(String(format: "f-%05d.png", $0)).path }
                .filter { FileManager.default.fileExists(atPath: $0) }
            let scanned = try Tool.run(["scan"] + pngs)
            #expect(scanned.stdout.contains(":\(code)\n"), "\(code) at \(offset) s: \(scanned.stdout)")
        }
        // Prefix, CSV, and a window that holds nothing.
        let code = try #require(first.keys.sorted().first)
        let prefixed = try Tool.run(["search", String(code.prefix(4)), "--prefix", "--index", index, "--csv"])
        #expect(prefixed.status == 0 && prefixed.stdout.hasPrefix("code,type,camera,"), "\(prefixed.stdout)")
        #expect(prefixed.stdout.contains("\n\(code),"), "\(prefixed.stdout)")
        let later = try Tool.run(["search", code, "--from", "2026-12-02", "--index", index])
        #expect(later.status == 4, "\(later.stdout)")
    }

    /// A searched text is data: quotes, SQL and LIKE wildcards find nothing (exit 4) and change nothing; bad times
    /// and a missing index are one line, exit 2; a file that is not our index is refused and left as it is.
    @Test func searchedTextIsDataAndBadInputIsNamed() throws {
        let folder = try Self.folder("sightings-bad")
        let index = folder.appendingPathComponent("index.sqlite").path
        let clip = folder.appendingPathComponent("c.mp4").path
        #expect(try Tool.run(["generate", clip, "--size", "320x240", "--frames", "30"]).status == 0)
        #expect(try Tool.run(["run", clip, "--viewfinder", "off", "--index", index, "--quiet"]).status == 0)
        let all = try Tool.run(["search", "--index", index, "--json"])
        let count = Self.rows(all.stdout).count
        #expect(count >= 3, "\(all.stdout)")
        for text in ["%", "_", "' OR '1'='1", "\"; DROP TABLE sightings; --", "4006381333931' --", "*"] {
            let r = try Tool.run(["search", text, "--index", index])
            #expect(r.status == 4 && r.stdout.isEmpty, "\(text): \(r.status) \(r.stdout)")
            let p = try Tool.run(["search", text, "--prefix", "--index", index])
            #expect(p.status == 4, "\(text) as a prefix: \(p.stdout)")
        }
        #expect(Self.rows(try Tool.run(["search", "--index", index, "--json"]).stdout).count == count)
        for (args, message) in [
            (["search", "x", "--from", "yesterday", "--index", index], "--from: time 'yesterday'"),
            (["search", "x", "--index", folder.path + "/none.sqlite"], "none.sqlite: no such index"),
            (["search", "--prefix", "--index", index], "--prefix needs the start of a code"),
            (["run", clip, "--start", "soon", "--index", index], "--start: time 'soon'"),
        ] {
            let r = try Tool.run(args)
            #expect(r.status == 2, "\(args): \(r.status)")
            let lines = r.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].contains(message), "\(args): \(r.stderr)")
        }
        // Not an SQLite file; an SQLite database of something else: refused, byte for byte as they were.
        let text = folder.appendingPathComponent("notes.txt").path
        try "my notes\n".write(toFile: text, atomically: true, encoding: .utf8)
        let other = folder.appendingPathComponent("other.db").path
        #expect(
            try Tool.shell("sqlite3 '\(other)' 'CREATE TABLE parcels (id INTEGER); INSERT INTO parcels VALUES (7);'")
                == 0)
        for file in [text, other] {
            let before = try Data(contentsOf: URL(fileURLWithPath: file))
            let r = try Tool.run(["run", clip, "--index", file, "--quiet"])
            #expect(r.status == 2 && r.stderr.contains("not a sightings index"), "\(file): \(r.stderr)")
            let s = try Tool.run(["search", "x", "--index", file])
            #expect(s.status == 2 && s.stderr.contains("not a sightings index"), "\(file): \(s.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before, "\(file) was changed")
        }
    }

    /// A live service instance: a code's sighting is in `GET /v1/sightings` within a second of its `appeared`
    /// event; pages follow their cursor; CSV; a stopped instance's sightings have their end.
    @Test func aLiveInstancesSightingsAreSearchableWithinASecond() throws {
        let service = try Service()
        defer { #expect(service.terminate() == 0, "\(service.stderr.suffix(400))") }
        try #require(service.port > 0, "\(service.stderr)")
        let made = try service.request(
            "POST", "/v1/pipelines/demo/instances",
            json: ["set": ["source.live": "true", "source.frames": "0", "source.size": "640x360"]])
        let id = try #require(made.object["id"] as? String, "\(made.text)")
        // The first appeared event, as a client of the event stream sees it.
        var code: String? = nil
        let deadline = Date(timeIntervalSinceNow: 20)
        while code == nil && Date() < deadline {
            let events = String(
                decoding: try service.stream("/v1/instances/\(id)/events?since=0", seconds: 0.5), as: UTF8.self)
            for l in events.split(separator: "\n") where l.hasPrefix("data: ") && l.contains(#""event":"appeared""#) {
                let o = try? JSONSerialization.jsonObject(with: Data(l.dropFirst(6).utf8)) as? [String: Any]
                if let d = o?["data"] as? String {
                    code = d
                    break
                }
            }
        }
        // Stamped when the client's read of the stream returns: up to its 0.5 s after the event came, so the second
        // the search is held to below is, from the event itself, up to 1.5 s (the margin this test leaves).
        let seen = Date()
        let awaited = try #require(code, "no appeared event in 20 s")
        var found: [String: Any]? = nil
        let query = awaited.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? awaited
        try pollUntil(5, every: 0.02) {
            let r = try service.request("GET", "/v1/sightings?code=\(query)&instance=\(id)")
            #expect(r.status == 200, "\(r.text)")
            found = (r.object["sightings"] as? [[String: Any]])?.first
            return found != nil
        }
        let delay = Date().timeIntervalSince(seen)
        #expect(found != nil, "\(awaited) never found")
        #expect(delay <= 1.0, "found \(String(format: "%.2f", delay)) s after its appeared event")
        #expect((found?["camera"] as? String) == id && (found?["pipeline"] as? String) == "demo", "\(found ?? [:])")
        // Pages: one row a page, each page's cursor giving the next, no row twice.
        try service.waitFor(id) { ($0["codes"] as? Int ?? 0) >= 3 }
        let stop = try service.request("DELETE", "/v1/instances/\(id)")
        #expect(stop.status == 200, "\(stop.text)")
        var seenRows = Set<String>()
        var cursor: String? = nil
        var pages = 0
        repeat {
            let r = try service.request("GET", "/v1/sightings?limit=1" + (cursor.map { "&cursor=\($0)" } ?? ""))
            #expect(r.status == 200, "\(r.text)")
            for row in r.object["sightings"] as? [[String: Any]] ?? [] {
                let key = "\(row["run"] ?? "")/\(row["track"] ?? "")"
                #expect(seenRows.insert(key).inserted, "\(key) twice")
                #expect((row["last_seen"] as? String ?? "") >= (row["first_seen"] as? String ?? "~"), "\(row)")
            }
            cursor = r.object["next"] as? String
            pages += 1
        } while cursor != nil && pages < 100
        #expect(seenRows.count >= 3 && pages == seenRows.count, "\(pages) pages, \(seenRows.count) rows")
        let csv = try service.request("GET", "/v1/sightings?format=csv&code=\(query)")
        #expect(
            csv.status == 200 && csv.text.hasPrefix("code,type,camera,") && csv.text.contains(awaited), "\(csv.text)")
        for bad in ["limit=0", "cursor=abc", "from=yesterday", "prefix=true"] {
            let r = try service.request("GET", "/v1/sightings?\(bad)")
            #expect(r.status == 400 && (r.object["error"] as? String) != nil, "\(bad): \(r.status) \(r.text)")
        }
    }

    /// Any text a code can hold (tabs, line breaks, backslashes, COPY's own `\\N`, quotes, accents, a `%`) is kept
    /// byte for byte by both stores, and a row written twice in one batch is one sighting with the later end.
    @Test(.disabled(if: Postgres.missing != nil, "\(Postgres.missing ?? "")"))
    func everyTextIsKeptAsWrittenByBothStores() throws {
        let pg = try Postgres()
        let file = try Self.folder("sightings-texts").appendingPathComponent("index.db").path
        let texts = [
            "A\tB", "line1\nline2\r\n", #"C:\path\N"#, #"\N"#, "O'Brien \"x\" 50%_", "Größe €", "4006381333931",
        ]
        let t0 = Date(timeIntervalSince1970: 1_765_000_000)
        func row(_ i: Int, _ code: String, end: Double, snapshot: String?) -> Sighting {
            Sighting(
                run: "texts", track: i, code: code, symbology: "QR-Code", camera: "dock\tA", pipeline: "p", node: "n",
                firstSeen: t0.addingTimeInterval(Double(i)), lastSeen: t0.addingTimeInterval(Double(i) + end),
                frames: Int(end * 30), polygon: [Point(1, 2), Point(30, 2), Point(30, 40), Point(1, 40)],
                snapshot: snapshot, recording: i == 0 ? nil : "/rec/a\\b.mp4", offsetSeconds: i == 0 ? nil : 1.25)
        }
        var rows = texts.enumerated().map { row($0.offset, $0.element, end: 1, snapshot: nil) }
        rows.append(row(2, texts[2], end: 4, snapshot: "s\n.png"))
        for location in [file, pg.url] {
            let store = try SightingIndexes.open(location)
            defer { store.close() }
            try store.write(rows)
            for (i, text) in texts.enumerated() {
                let found = try store.search(SightingQuery(code: text)).sightings
                #expect(found.count == 1, "\(location): \(text.debugDescription) found \(found.count) times")
                guard let s = found.first else { continue }
                #expect(s.code == text && s.camera == "dock\tA" && s.polygon.count == 4)
                #expect(s.recording == (i == 0 ? nil : "/rec/a\\b.mp4") && s.offsetSeconds == (i == 0 ? nil : 1.25))
                #expect(s.lastSeen == t0.addingTimeInterval(Double(i) + (i == 2 ? 4 : 1)))
                #expect(s.snapshot == (i == 2 ? "s\n.png" : nil), "\(location): \(String(describing: s.snapshot))")
            }
        }
    }

    /// PostgreSQL shared by two runs (two cameras of a site); stopped during a live run and started again, it loses
    /// no sighting: every appeared event of the run is a row.
    @Test(.disabled(if: Postgres.missing != nil, "\(Postgres.missing ?? "")"))
    func postgresIsSharedAndAnOutageLosesNothing() throws {
        let pg = try Postgres()
        let folder = try Self.folder("sightings-pg")
        let clip = folder.appendingPathComponent("c.mp4").path
        #expect(try Tool.run(["generate", clip, "--size", "320x240", "--frames", "30"]).status == 0)
        for camera in ["dock1", "dock2"] {
            let r = try Tool.run(["run", clip, "--viewfinder", "off", "--index", pg.url, "--camera", camera, "--quiet"])
            #expect(r.status == 0, "\(r.stderr)")
        }
        let both = Self.rows(try Tool.run(["search", "4006381333931", "--index", pg.url, "--json"]).stdout)
        #expect(Set(both.compactMap { $0["camera"] as? String }) == ["dock1", "dock2"], "\(both)")
        #expect(try pg.psql("SELECT count(DISTINCT camera) FROM sightings") == "2")

        // An outage during a live run: the index goes away once the first sighting is written, comes back once the
        // run has said that sightings wait. The conveyor brings a parcel every few seconds, so that a sighting fails
        // to be written while the run goes on (the demo's first codes stay in view to the end: under load the run
        // could end before its only later write, the end's).
        let events = folder.appendingPathComponent("live.jsonl").path
        let p = Process()
        p.executableURL = Tool.url
        p.arguments = [
            "run", "demo", "--scene", "conveyor", "--live", "--frames", "450", "--size", "640x360", "--index", pg.url,
            "--camera", "live", "--events", events, "--quiet",
        ]
        p.standardError = FileHandle.nullDevice
        try p.run()
        func eventsText() -> String { (try? String(contentsOfFile: events, encoding: .utf8)) ?? "" }
        func wait(_ what: String, _ condition: () throws -> Bool) throws {
            let came = try pollUntil(20, condition)
            #expect(came, "\(what) did not happen in 20 s: \(eventsText().suffix(400))")
        }
        try wait("a first sighting in the index") {
            (try? pg.psql("SELECT count(*) FROM sightings WHERE camera = 'live'")).flatMap { Int($0) } ?? 0 > 0
        }
        pg.stop()
        try wait("a warning that sightings wait") { eventsText().contains("sightings wait") }
        try pg.start()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        let text = eventsText()
        #expect(text.contains("written again"), "\(text.suffix(400))")
        let appeared = text.split(separator: "\n").filter { $0.contains(#""event":"appeared""#) }.count
        let rows = Int(try pg.psql("SELECT count(*) FROM sightings WHERE camera = 'live'")) ?? -1
        #expect(appeared >= 3 && rows == appeared, "\(appeared) appeared events, \(rows) rows")
        let unended = try pg.psql(
            "SELECT count(*) FROM sightings WHERE camera = 'live' AND last_seen_us < first_seen_us")
        #expect(unended == "0")
    }

    /// A database still away when a run ends: its waiting sightings go to the spool (in the state folder), and the
    /// next run that reaches the index writes them: none lost.
    @Test(.disabled(if: Postgres.missing != nil, "\(Postgres.missing ?? "")"))
    func sightingsLeftAtTheEndWaitInTheSpoolForTheNextRun() throws {
        let pg = try Postgres()
        let folder = try Self.folder("sightings-spool")
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = folder.appendingPathComponent("state").path
        let events = folder.appendingPathComponent("live.jsonl").path
        func start(_ args: [String]) throws -> (Process, Pipe) {
            let p = Process()
            p.executableURL = Tool.url
            p.arguments = args
            p.environment = environment
            let err = Pipe()
            p.standardError = err
            p.standardOutput = FileHandle.nullDevice
            try p.run()
            return (p, err)
        }
        let (live, liveErr) = try start([
            "run", "demo", "--live", "--frames", "150", "--size", "640x360", "--index", pg.url, "--camera", "spooled",
            "--events", events, "--quiet",
        ])
        waitUntil(20, "the run's first sighting in the index") {
            ((try? pg.psql("SELECT count(*) FROM sightings WHERE camera = 'spooled'")).flatMap { Int($0) } ?? 0) > 0
        }
        pg.stop()
        let said = String(decoding: liveErr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        live.waitUntilExit()
        #expect(live.terminationStatus == 0, "\(said)")
        // Quiet (no summary line), the spool is still said, once, on standard error.
        #expect(said.contains("sightings wait in the spool for the index"), "\(said)")
        let text = (try? String(contentsOfFile: events, encoding: .utf8)) ?? ""
        let appeared = text.split(separator: "\n").filter { $0.contains(#""event":"appeared""#) }.count
        let spool = folder.appendingPathComponent("state/barscope/index-spool").path
        // The spool has a folder for each index.
        func spooled() -> [String] {
            ((try? FileManager.default.subpathsOfDirectory(atPath: spool)) ?? []).filter { $0.hasSuffix(".jsonl") }
        }
        #expect(spooled().contains { $0.contains("/sightings-") }, "nothing in the spool: \(spooled())")
        try pg.start()
        let clip = folder.appendingPathComponent("c.mp4").path
        #expect(try Tool.run(["generate", clip, "--size", "320x240", "--frames", "10"]).status == 0)
        let (next, nextErr) = try start(["run", clip, "--index", pg.url, "--camera", "next"])
        let nextSaid = String(decoding: nextErr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        next.waitUntilExit()
        #expect(next.terminationStatus == 0, "\(nextSaid)")
        let rows = Int(try pg.psql("SELECT count(*) FROM sightings WHERE camera = 'spooled'")) ?? -1
        #expect(appeared >= 3 && rows == appeared, "\(appeared) appeared events, \(rows) rows")
        #expect(spooled().isEmpty, "the spool is not empty: \(spooled())")
    }

    /// An unreachable PostgreSQL at start: one line naming it (never its password), exit 2.
    @Test func anUnreachableDatabaseIsOneLine() throws {
        let url = "postgresql://scanner:hunter2-secret@127.0.0.1:\(Broker.freePort())/site"
        for args in [["run", "demo", "--frames", "5", "--index", url], ["search", "x", "--index", url]] {
            let r = try Tool.run(args)
            #expect(r.status == 2, "\(args): \(r.status) \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1 && r.stderr.contains("cannot connect"), "\(r.stderr)")
            #expect(!r.stderr.contains("hunter2"), "the password shows: \(r.stderr)")
        }
    }
}
