import Foundation
import TestSupport
import Testing

/// `barscope index`: recordings already made scanned into the index with their own start times, resumable, bad files
/// named and skipped; two workers on one PostgreSQL split an archive, one of them killed half-way, and every file is
/// indexed exactly once.
@Suite(.serialized, .suiteLimit) struct ArchiveIndexTests {
    static func rows(_ json: String) -> [[String: Any]] { SightingsTests.rows(json) }

    static func date(_ text: String) -> Date? {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.date(from: text) ?? ISO8601DateFormatter().date(from: text)
    }

    /// The first frame of a generated clip as a PNG (three codes in view).
    static func still(from clip: String, to png: String) throws {
        let r = try Tool.shellResult([
            "gst-launch-1.0", "-q", "filesrc", "location=\(clip)", "!", "decodebin", "!", "videoconvert", "!",
            "pngenc", "snapshot=true", "!", "filesink", "location=\(png)",
        ])
        try #require(r.status == 0, "\(r.stderr)")
    }

    /// Each file's start from the source the documentation gives (container tag, name, --start, last change), the
    /// recording and offset in each row, bad and missing files named on one line each (exit 1), a second run that
    /// skips what is done, a changed file indexed again without a second copy of its rows.
    @Test func anArchiveIsIndexedWithItsOwnTimesAndResumed() throws {
        let folder = try SightingsTests.folder("archive")
        let clip = folder.appendingPathComponent("a.mp4").path
        #expect(try Tool.run(["generate", clip, "--size", "640x360", "--frames", "60"]).status == 0)
        // A muxer's creation time is when it was made: its last change is set far from it, so that the tag is seen
        // to win over it.
        #expect(try Tool.shell("touch -d 2020-01-01T00:00:00Z '\(clip)'") == 0)
        let named = folder.appendingPathComponent("dock1-20261205-143000.png").path
        let plain = folder.appendingPathComponent("plain.png").path
        let dated = folder.appendingPathComponent("dated.png").path
        try Self.still(from: clip, to: named)
        try Self.still(from: clip, to: plain)
        try Self.still(from: clip, to: dated)
        #expect(try Tool.shell("touch -d 2025-03-01T10:00:00Z '\(dated)'") == 0)
        let broken = folder.appendingPathComponent("broken.mp4").path
        try "not a video\n".write(toFile: broken, atomically: true, encoding: .utf8)
        let missing = folder.appendingPathComponent("gone.mp4").path
        let index = folder.appendingPathComponent("index.sqlite").path
        func indexing(_ paths: [String], _ extra: [String] = []) throws -> Tool.Result {
            try Tool.run(["index"] + paths + ["--index", index] + extra)
        }
        let first = try indexing([clip, named, plain, broken, missing], ["--start", "2026-01-01T00:00:00Z"])
        #expect(first.status == 1, "\(first.stderr)")
        let lines = first.stderr.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.contains("broken.mp4") }.count == 1, "\(first.stderr)")
        #expect(lines.contains { $0.hasSuffix("gone.mp4: no such file (skipped)") }, "\(first.stderr)")
        #expect(lines.last?.contains("3 indexed") == true && lines.last?.contains("2 bad") == true, "\(first.stderr)")
        let dates = try indexing([dated])
        #expect(dates.status == 0, "\(dates.stderr)")

        let all = Self.rows(try Tool.run(["search", "--index", index, "--json", "--limit", "100"]).stdout)
        func starts(_ file: String) -> [Date] {
            all.filter { ($0["recording"] as? String) == file }.compactMap {
                guard let seen = Self.date($0["first_seen"] as? String ?? ""), let offset = $0["offset_s"] as? Double
                else { return nil }
                return seen.addingTimeInterval(-offset)
            }
        }
        // The clip: its container's datetime (made minutes ago), not its last change (2020).
        let tagged = starts(clip)
        #expect(tagged.count >= 3 && tagged.allSatisfy { abs($0.timeIntervalSinceNow) < 600 }, "\(tagged)")
        // The name's timestamp, as UTC, and the camera before it.
        #expect(starts(named).count == 3 && starts(named).allSatisfy { $0 == Self.date("2026-12-05T14:30:00Z") })
        #expect(
            all.filter { ($0["recording"] as? String) == named }.allSatisfy { ($0["camera"] as? String) == "dock1" })
        // --start for a file that says none; its last change less its length (one frame) for one without --start.
        #expect(starts(plain).count == 3 && starts(plain).allSatisfy { $0 == Self.date("2026-01-01T00:00:00Z") })
        let changed = try #require(Self.date("2025-03-01T10:00:00Z"))
        #expect(starts(dated).count == 3 && starts(dated).allSatisfy { abs($0.timeIntervalSince(changed)) < 0.1 })

        // Again: nothing is scanned, the bad file is named again (exit 1).
        let again = try indexing([clip, named, plain, broken])
        #expect(again.status == 1, "\(again.stderr)")
        #expect(again.stderr.contains("0 indexed") && again.stderr.contains("found before"), "\(again.stderr)")
        #expect(Self.rows(try Tool.run(["search", "--index", index, "--json"]).stdout).count == all.count)
        // A file changed since is indexed again: its rows replaced, not doubled.
        #expect(try Tool.shell("touch '\(clip)'") == 0)
        let changedRun = try indexing([clip])
        #expect(changedRun.status == 0 && changedRun.stderr.contains("1 indexed"), "\(changedRun.stderr)")
        let after = Self.rows(try Tool.run(["search", "--index", index, "--json"]).stdout)
        #expect(after.count == all.count, "\(all.count) rows before, \(after.count) after")
        #expect(Set(after.compactMap { $0["run"] as? String }).count == 4)
    }

    /// Bad options and an unreachable index: one line naming the fault, exit 2 (never a password).
    @Test func badOptionsAreOneLine() throws {
        let folder = try SightingsTests.folder("archive-bad")
        let index = folder.appendingPathComponent("i.sqlite").path
        let url = "postgresql://scanner:hunter2-secret@127.0.0.1:\(Broker.freePort())/site"
        for (args, message) in [
            (["index"], "index needs the recordings"),
            (["index", folder.path, "--lease", "0", "--index", index], "--lease '0'"),
            (["index", folder.path, "--start", "soon", "--index", index], "--start: time 'soon'"),
            (["index", folder.path, "--jobs", "x", "--index", index], "--jobs 'x'"),
            (["index", folder.path, "--index", url], "cannot connect"),
        ] {
            let r = try Tool.run(args)
            #expect(r.status == 2, "\(args): \(r.status) \(r.stderr)")
            let lines = r.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].contains(message), "\(args): \(r.stderr)")
            #expect(!r.stderr.contains("hunter2"))
        }
    }

    /// Two workers on one PostgreSQL index split 20 files; one is killed (SIGKILL) while it scans a file, half-way;
    /// the other takes that file again once its lease runs out. Every file is done, each with the rows a scan of it
    /// alone gives (none twice), and both workers indexed some.
    @Test(.disabled(if: Postgres.missing != nil, "\(Postgres.missing ?? "")"))
    func twoWorkersSplitAnArchiveAndAKilledWorkersFileIsTakenAgain() throws {
        let pg = try Postgres()
        let folder = try SightingsTests.folder("archive-pg")
        let archive = folder.appendingPathComponent("archive")
        try FileManager.default.createDirectory(at: archive, withIntermediateDirectories: true)
        let clip = folder.appendingPathComponent("clip.mp4").path
        #expect(try Tool.run(["generate", clip, "--size", "640x360", "--frames", "90"]).status == 0)
        for n in 1...20 {
            try FileManager.default.copyItem(
                atPath: clip, toPath: archive.appendingPathComponent(String(format: "cam-%02d.mp4", n)).path)
        }
        // The rows one file gives, indexed alone (the scan of a file is the same every time).
        let alone = folder.appendingPathComponent("alone.sqlite").path
        #expect(try Tool.run(["index", clip, "--index", alone, "-q"]).status == 0)
        let expected = Self.rows(try Tool.run(["search", "--index", alone, "--json"]).stdout).count
        try #require(expected >= 3, "one file gave \(expected) sightings")

        func worker() throws -> Process {
            let p = Process()
            p.executableURL = Tool.url
            p.arguments = ["index", archive.path, "--index", pg.url, "--lease", "3"]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            return p
        }
        let killed = try worker()
        let survivor = try worker()
        defer { if survivor.isRunning { kill(survivor.processIdentifier, SIGKILL) } }
        let victim = killed.processIdentifier
        func count(_ sql: String) -> Int { (try? pg.psql(sql)).flatMap { Int($0) } ?? -1 }
        // Half-way, with a file in the victim's hands.
        func heldNow() -> [String] {
            ((try? pg.psql("SELECT path FROM files WHERE state = 'scanning' AND owner LIKE '%:\(victim):%'")) ?? "")
                .split(separator: "\n").map(String.init)
        }
        var held: [String] = []
        pollUntil(120) {
            guard killed.isRunning else { return true }
            guard count("SELECT count(*) FROM files WHERE state = 'done'") >= 6, !heldNow().isEmpty else {
                return false
            }
            // Stopped first, then looked at again: it cannot finish the file between the look and the kill (it did
            // once, in the few milliseconds between them).
            kill(victim, SIGSTOP)
            held = heldNow()
            if held.isEmpty { kill(victim, SIGCONT) }
            return !held.isEmpty
        }
        try #require(!held.isEmpty, "the first worker never held a file with 6 done")
        kill(victim, SIGKILL)
        killed.waitUntilExit()
        pollUntil(180, every: 0.1) { !survivor.isRunning }
        #expect(!survivor.isRunning && survivor.terminationStatus == 0, "the survivor did not end with 0")

        #expect(count("SELECT count(*) FROM files WHERE state = 'done'") == 20)
        let perFile = try pg.psql("SELECT count(*) FROM sightings GROUP BY run").split(separator: "\n")
            .compactMap { Int($0) }
        #expect(perFile.count == 20 && perFile.allSatisfy { $0 == expected }, "rows per file: \(perFile)")
        #expect(count("SELECT count(DISTINCT indexed_by) FROM files") == 2, "both workers indexed some")
        for path in held {
            let by = try pg.psql("SELECT indexed_by FROM files WHERE path = '\(path)'")
            #expect(by.contains(":\(survivor.processIdentifier):"), "\(path), the victim's, indexed by \(by)")
        }
    }
}
