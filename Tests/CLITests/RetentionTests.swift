import Foundation
import TestSupport
import Testing

/// `--keep-days N`: sightings older than N days go, with the recordings and snapshots they named, never a file still
/// being written, never a file the index does not know.
@Suite(.serialized, .suiteLimit) struct RetentionTests {
    static let day: Int64 = 86_400_000_000

    /// Rows and files made now, then aged: the rows' times moved 40 days back, the files' last change set to then.
    static func age(_ index: String, cameras: [String], files: [String]) throws {
        let list = cameras.map { "'\($0)'" }.joined(separator: ",")
        #expect(
            try Tool.shell(
                "sqlite3 '\(index)' \"UPDATE sightings SET first_seen_us = first_seen_us - 40 * \(day), "
                    + "last_seen_us = last_seen_us - 40 * \(day) WHERE camera IN (\(list))\"") == 0)
        for f in files { #expect(try Tool.shell("touch -d '40 days ago' '\(f)'") == 0, "\(f)") }
    }

    static func pictures(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".png") }.map {
            folder + "/" + $0
        }
    }

    @Test func indexKeepDaysDeletesWhatIsOldAndNeverAnOpenFile() throws {
        let folder = try SightingsTests.folder("retention").path
        let index = folder + "/index.sqlite"
        func record(_ camera: String) throws {
            let r = try Tool.run([
                "run", "demo", "--frames", "60", "--size", "640x360", "--record", "\(folder)/\(camera).mp4",
                "--snapshots", "\(folder)/\(camera)-snaps", "--index", index, "--camera", camera, "--quiet",
            ])
            #expect(r.status == 0, "\(r.stderr)")
        }
        for camera in ["old", "held", "new"] { try record(camera) }
        try #require(!Self.pictures(folder + "/old-snaps").isEmpty, "no snapshot was written")
        let unknown = folder + "/notes.txt"
        try "not the index's\n".write(toFile: unknown, atomically: true, encoding: .utf8)
        try Self.age(
            index, cameras: ["old", "held"],
            files: [folder + "/old.mp4", folder + "/held.mp4", unknown] + Self.pictures(folder + "/old-snaps")
                + Self.pictures(folder + "/held-snaps"))
        // held.mp4 is being written (open for writing here) while the sweep runs; its last change stays old.
        let writing = try #require(FileHandle(forUpdatingAtPath: folder + "/held.mp4"))
        #expect(try Tool.shell("touch -d '40 days ago' '\(folder)/held.mp4'") == 0)
        let swept = try Tool.run(["index", "--keep-days", "30", "--index", index])
        #expect(swept.status == 0, "\(swept.stderr)")
        #expect(
            swept.stderr.contains("retention (30 days): ") && swept.stderr.contains("1 old files kept"),
            "\(swept.stderr)")
        func found(_ camera: String) throws -> Int32 {
            try Tool.run(["search", "--camera", camera, "--index", index]).status
        }
        // The recording being written keeps its sightings as well.
        #expect(try found("old") == 4 && found("held") == 0 && found("new") == 0)
        let exists = { (path: String) in FileManager.default.fileExists(atPath: path) }
        #expect(!exists(folder + "/old.mp4") && Self.pictures(folder + "/old-snaps").isEmpty, "old files left")
        #expect(exists(folder + "/held.mp4"), "a file being written was deleted")
        #expect(exists(folder + "/new.mp4") && !Self.pictures(folder + "/new-snaps").isEmpty, "new files deleted")
        #expect(exists(unknown), "a file the index does not know was deleted")
        // Closed, it goes at the next sweep, with its sightings and snapshots.
        try writing.close()
        let next = try Tool.run(["index", "--keep-days", "30", "--index", index])
        #expect(next.status == 0 && !next.stderr.contains("kept"), "\(next.stderr)")
        #expect(
            try found("held") == 4 && !exists(folder + "/held.mp4") && Self.pictures(folder + "/held-snaps").isEmpty)
        #expect(try found("new") == 0 && exists(unknown))
    }

    /// `serve --keep-days`: the service's index loses its old sightings at the start.
    @Test func serveSweepsItsIndexAtTheStart() throws {
        let state = try SightingsTests.folder("retention-serve").path
        let index = state + "/sightings.sqlite"
        for camera in ["aged", "fresh"] {
            let r = try Tool.run([
                "run", "demo", "--frames", "30", "--size", "640x360", "--index", index, "--camera", camera, "--quiet",
            ])
            #expect(r.status == 0, "\(r.stderr)")
        }
        try Self.age(index, cameras: ["aged"], files: [])
        let service = try Service(state: state, extra: ["--keep-days", "30"])
        defer { #expect(service.terminate() == 0) }
        var left = Int32(0)
        try pollUntil(20, every: 0.1) {
            left = try Tool.run(["search", "--camera", "aged", "--index", index]).status
            return left == 4
        }
        #expect(left == 4, "the aged sightings are still there")
        #expect(try Tool.run(["search", "--camera", "fresh", "--index", index]).status == 0)
    }
}
