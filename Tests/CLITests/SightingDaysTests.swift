import Barscope
import Foundation
import TestSupport
import Testing

/// The code index is ordered by the day of first sight before the code (so that the rows written now go into one
/// small part of it, whatever its size): a search by code still finds its rows on every day, within its bounds and
/// page after page, in both stores; and an index made before the days came is given them when it is next opened.
@Suite(.suiteLimit) struct SightingDaysTests {
    static let day = 86_400.0
    /// 2026-12-01T00:00:00Z.
    static let midnight = Date(timeIntervalSince1970: 1_796_083_200)

    /// Two codes and a third that shares their start, over five days: at the days' edges (a millisecond before
    /// midnight, at midnight), and one before 1970 (days counted back from it).
    static func rows() -> [Sighting] {
        var times: [Date] = [Date(timeIntervalSince1970: -3 * day + 5)]
        for d in 0..<5 {
            let start = midnight.addingTimeInterval(Double(d) * day)
            times += [start.addingTimeInterval(-0.001), start, start.addingTimeInterval(0.5 * day)]
        }
        return times.enumerated().map { i, t in
            Sighting(
                run: "days", track: i, code: ["4006381333931", "4006381333948", "40063"][i % 3], symbology: "EAN-13",
                camera: "dock\(i % 2)", pipeline: "dock", node: "node1", firstSeen: t,
                lastSeen: t.addingTimeInterval(2),
                frames: 10, polygon: [Point(1, 1), Point(1, 9), Point(9, 9), Point(9, 1)])
        }
    }

    /// Every search, paged two rows at a time, against the rows filtered by hand.
    static func searchesFindEveryDay(_ store: SightingStore) throws {
        let rows = rows()
        try store.write(rows)
        let bounds: [(Date?, Date?)] = [
            (nil, nil), (midnight, nil), (nil, midnight.addingTimeInterval(2 * day - 0.001)),
            (midnight.addingTimeInterval(day), midnight.addingTimeInterval(3 * day)),
        ]
        for (code, prefix) in [("4006381333931", false), ("4006381333948", false), ("40063", false), ("4006", true)] {
            for (from, to) in bounds {
                var found: [Int] = []
                var cursor: SightingQuery.Cursor? = nil
                repeat {
                    let page = try store.search(
                        SightingQuery(code: code, prefix: prefix, from: from, to: to, limit: 2, cursor: cursor))
                    found += page.sightings.map(\.track)
                    cursor = page.next
                } while cursor != nil && found.count < 100
                let expected = rows.filter { r in
                    (prefix ? r.code.hasPrefix(code) : r.code == code) && from.map { r.firstSeen >= $0 } ?? true
                        && to.map { r.firstSeen <= $0 } ?? true
                }.sorted { $0.firstSeen > $1.firstSeen }.map(\.track)
                #expect(
                    found == expected,
                    "\(code) prefix \(prefix) from \(String(describing: from)) to \(String(describing: to))")
            }
        }
    }

    @Test func aCodeIsFoundOnEveryDayInSQLite() throws {
        let folder = try SightingsTests.folder("sighting-days")
        let store = try SightingIndexes.open(folder.appendingPathComponent("index.sqlite").path)
        defer { store.close() }
        try Self.searchesFindEveryDay(store)
    }

    @Test(.disabled(if: Postgres.missing != nil, "\(Postgres.missing ?? "")"))
    func aCodeIsFoundOnEveryDayInPostgreSQL() throws {
        let pg = try Postgres()
        let store = try SightingIndexes.open(pg.url)
        defer { store.close() }
        try Self.searchesFindEveryDay(store)
        #expect(try pg.psql("SELECT count(*) FROM sighting_days") == "7")
    }

    /// Retention takes the rows last seen before its cutoff, and the days before the cutoff's that no row is left
    /// in; a later search finds what is left.
    static func retentionTakesTheEmptyDays(_ location: String, _ sql: (String) throws -> String) throws {
        let store = try SightingIndexes.openLedger(location)
        defer { store.close() }
        try store.write(rows())
        let cutoff = midnight.addingTimeInterval(1.5 * day)
        let expired = try store.expire(before: cutoff, sparing: [])
        let kept = rows().filter { $0.lastSeen >= cutoff }
        #expect(expired.rows == rows().count - kept.count)
        // Left: the cutoff's own day (a row in it is kept) and the three after it.
        #expect(try sql("SELECT min(day) || ' ' || count(*) FROM sighting_days") == "20789 4")
        let found = try store.search(SightingQuery(code: "4006", prefix: true)).sightings
        #expect(found.map(\.track) == kept.sorted { $0.firstSeen > $1.firstSeen }.map(\.track))
    }

    @Test func retentionTakesTheEmptyDaysInSQLite() throws {
        let file = try SightingsTests.folder("sighting-days-kept").appendingPathComponent("index.sqlite").path
        try Self.retentionTakesTheEmptyDays(file) {
            try Tool.shellResult(["sqlite3", file, $0]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    @Test(.disabled(if: Postgres.missing != nil, "\(Postgres.missing ?? "")"))
    func retentionTakesTheEmptyDaysInPostgreSQL() throws {
        let pg = try Postgres()
        try Self.retentionTakesTheEmptyDays(pg.url) { try pg.psql($0) }
    }

    /// The columns and index of an index made before the days (2026-12-06's schema), with two rows.
    static let olderSchema = """
        CREATE TABLE sightings (
          id INTEGER PRIMARY KEY, run TEXT NOT NULL, track INTEGER NOT NULL, code TEXT NOT NULL,
          symbology TEXT NOT NULL, camera TEXT NOT NULL, pipeline TEXT NOT NULL, node TEXT NOT NULL,
          first_seen_us BIGINT NOT NULL, last_seen_us BIGINT NOT NULL, frames INTEGER NOT NULL,
          polygon TEXT NOT NULL, snapshot TEXT, recording TEXT, offset_ms BIGINT, UNIQUE (run, track));
        CREATE INDEX sightings_code ON sightings (code, first_seen_us, id);
        CREATE INDEX sightings_time ON sightings (first_seen_us, id);
        INSERT INTO sightings (run, track, code, symbology, camera, pipeline, node, first_seen_us, last_seen_us,
          frames, polygon) VALUES
          ('old', 1, '4006381333931', 'EAN-13', 'dock1', 'dock', 'n', 1796083200000000, 1796083201000000, 5, '[]'),
          ('old', 2, '4006381333931', 'EAN-13', 'dock1', 'dock', 'n', 1796169600500000, 1796169601000000, 5, '[]');
        """

    /// Found after the upgrade, on both days, and beside a row written after it; the old code index is gone.
    static func olderIndexIsUpgraded(_ location: String, _ sql: (String) throws -> String) throws {
        let store = try SightingIndexes.open(location)
        defer { store.close() }
        let newer = Sighting(
            run: "new", track: 1, code: "4006381333931", symbology: "EAN-13", camera: "dock2", pipeline: "dock",
            node: "n", firstSeen: midnight.addingTimeInterval(2 * day),
            lastSeen: midnight.addingTimeInterval(2 * day + 1),
            frames: 3, polygon: [])
        try store.write([newer])
        let found = try store.search(SightingQuery(code: "4006381333931")).sightings
        #expect(found.map { "\($0.run)/\($0.track)" } == ["new/1", "old/2", "old/1"])
        #expect(try sql("SELECT count(*) FROM sighting_days") == "3")
    }

    @Test func anSQLiteIndexMadeBeforeTheDaysIsGivenThem() throws {
        let file = try SightingsTests.folder("sighting-days-old").appendingPathComponent("index.sqlite").path
        let made = try Tool.shellResult(["sqlite3", file, "PRAGMA application_id = \(0x4253_4350);" + Self.olderSchema])
        #expect(made.status == 0, "\(made.stderr)")
        func sql(_ q: String) throws -> String {
            try Tool.shellResult(["sqlite3", file, q]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        try Self.olderIndexIsUpgraded(file, sql)
        #expect(
            try sql("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'sightings' ORDER BY name")
                .split(separator: "\n")
                == ["sightings_day_code", "sightings_time", "sqlite_autoindex_sightings_1"])
    }

    @Test(.disabled(if: Postgres.missing != nil, "\(Postgres.missing ?? "")"))
    func aPostgreSQLIndexMadeBeforeTheDaysIsGivenThem() throws {
        let pg = try Postgres()
        _ = try pg.psql(
            Self.olderSchema.replacingOccurrences(of: "id INTEGER PRIMARY KEY", with: "id BIGSERIAL PRIMARY KEY"))
        try Self.olderIndexIsUpgraded(pg.url) { try pg.psql($0) }
        #expect(try pg.psql("SELECT count(*) FROM pg_indexes WHERE indexname = 'sightings_code'") == "0")
    }
}
