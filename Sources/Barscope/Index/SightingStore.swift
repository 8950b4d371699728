import Foundation

/// Where sightings are kept: an SQLite file (the default, embedded) or a PostgreSQL database several nodes share.
/// Both hold the same table and answer the same queries, always with bound parameters (a searched text is data,
/// never SQL).
///
/// Sendable for handing over: a store is used by one thread at a time (a recorder's writer, or the service's
/// searches under its lock).
public protocol SightingStore: AnyObject, Sendable {
    /// Writes the rows in one transaction; a row already there (the same run and track) is updated.
    func write(_ rows: [Sighting]) throws
    /// A page of the rows matching, newest first.
    func search(_ query: SightingQuery) throws -> SightingPage
    /// Writes read cycles' results in one transaction; a cycle already there (the same run and number) is updated.
    func write(cycles: [CycleRow]) throws
    /// The cycles matching, newest first.
    func searchCycles(_ query: CycleQuery) throws -> [CycleRow]
    /// Tidies up what the writes put off, while no write waits (SQLite: the WAL written back into the file).
    func settle()
    func close()
}

extension SightingStore {
    public func settle() {}
}

public enum SightingIndexes {
    /// Opens the store a `--index` value names: `postgresql://...` (or `postgres://`) a PostgreSQL database, anything
    /// else an SQLite file (made when missing; a file that is not an SQLite database, or not ours, is refused and
    /// left as it is).
    /// - Throws: ``BarscopeError/badInput`` naming the index (a password in a URL never shown).
    public static func open(_ location: String) throws -> SightingStore {
        if isPostgres(location) { return try PostgresSightingStore(url: location) }
        return try SQLiteSightingStore(path: location)
    }

    /// Opens the store with its `files` table, for `barscope index` (see ``open(_:)``).
    public static func openLedger(_ location: String) throws -> SightingStore & ArchiveLedger {
        if isPostgres(location) { return try PostgresSightingStore(url: location) }
        return try SQLiteSightingStore(path: location)
    }

    /// The spool of one index in a state folder: rows for another index never go to this one.
    public static func spoolFolder(in state: String, for location: String) -> String {
        // FNV-1a of the location: a stable name (Swift's hashValue changes every run).
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in location.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return (state as NSString).appendingPathComponent("index-spool/" + String(h, radix: 16))
    }

    public static func isPostgres(_ location: String) -> Bool {
        location.hasPrefix("postgresql://") || location.hasPrefix("postgres://")
    }

    /// The location as it may be shown: a URL's password hidden.
    public static func shown(_ location: String) -> String {
        isPostgres(location) ? Redact.uri(location) : location
    }

    /// The columns, in the order both stores read them.
    static let columns =
        "id, run, track, code, symbology, camera, pipeline, node, first_seen_us, last_seen_us, frames, polygon, "
        + "snapshot, recording, offset_ms"

    /// A time's day (UTC days since 1970, as integer division gives them in Swift, SQLite and PostgreSQL alike):
    /// the code index is ordered by the day of first sight before the code. The rows a site writes now all go into
    /// today's part of the index, which stays in the cache, whatever the index's size; a search by code looks in
    /// the days' parts newest first (`sighting_days` lists the days).
    static let dayMicros: Int64 = 86_400_000_000
    static func day(ofMicros us: Int64) -> Int64 { us / dayMicros }

    /// The days a search by code may find rows in, newest first: those the index has, within the search's time
    /// bounds (a page after a cursor is older than it). Its query and parameters.
    static func daysSQL(_ q: SightingQuery, placeholder: (Int) -> String) -> (String, [String]) {
        var bounds: [String] = []
        var values: [String] = []
        if let from = q.from {
            values.append(String(day(ofMicros: micros(from))))
            bounds.append("day >= \(placeholder(values.count))")
        }
        if let newest = [q.to.map { micros($0) }, q.cursor?.firstSeenMicros].compactMap({ $0 }).min() {
            values.append(String(day(ofMicros: newest)))
            bounds.append("day <= \(placeholder(values.count))")
        }
        let clause = bounds.isEmpty ? "" : " WHERE " + bounds.joined(separator: " AND ")
        return ("SELECT day FROM sighting_days\(clause) ORDER BY day DESC", values)
    }

    /// A search: by code, the days' parts of the index newest first, one day, then the next two, four..., until
    /// the page is full. A day's rows are all newer than an earlier day's, so the page is the newest rows of the
    /// parts that fill it: a prefix that matches thousands of rows a day is ranked from its newest day alone, and
    /// a code seen a few times is looked up in each day (each part's days looked up one by one in the index).
    /// - Parameters:
    ///   - days: the days (``daysSQL(_:placeholder:)``'s answer).
    ///   - rows: the rows of a page of `wanted` rows (and one more) within the days given, newest first.
    static func search(
        _ q: SightingQuery, days: () throws -> [Int64], rows: (ClosedRange<Int64>?, Int) throws -> [Sighting]
    ) throws -> SightingPage {
        let limit = max(1, min(q.limit, 10_000))
        guard q.code != nil else { return SightingPage(rows: try rows(nil, limit), limit: limit) }
        let all = try days()
        var found: [Sighting] = []
        var start = 0
        var width = 1
        while start < all.count, found.count <= limit {
            let part = all[start..<min(all.count, start + width)]
            found += try rows(part.last!...part.first!, limit - found.count)
            start += width
            width *= 2
        }
        return SightingPage(rows: found, limit: limit)
    }

    /// The search's WHERE clause and its parameters, `?` numbered by `placeholder` (SQLite `?N`, PostgreSQL `$N`).
    /// A search by code is kept to the days of `window` (``search(_:days:rows:)``); `days` makes the term that keeps
    /// the code index's days to those a subquery lists, each looked up on its own.
    static func whereClause(
        _ q: SightingQuery, window: ClosedRange<Int64>? = nil, placeholder: (Int) -> String,
        days: (String) -> String
    ) -> (String, [String]) {
        var terms: [String] = []
        var values: [String] = []
        func bind(_ v: String) -> String {
            values.append(v)
            return placeholder(values.count)
        }
        if let code = q.code {
            if let w = window {
                let (lo, hi) = (bind(String(w.lowerBound)), bind(String(w.upperBound)))
                terms.append(days("SELECT day FROM sighting_days WHERE day >= \(lo) AND day <= \(hi)"))
            }
            if q.prefix {
                terms.append("code >= \(bind(code)) AND code < \(bind(SightingQuery.upperBound(ofPrefix: code)))")
            } else {
                terms.append("code = \(bind(code))")
            }
        }
        if let from = q.from { terms.append("first_seen_us >= \(bind(String(micros(from))))") }
        if let to = q.to { terms.append("first_seen_us <= \(bind(String(micros(to))))") }
        if let camera = q.camera {
            let p = bind(camera)
            terms.append("(camera = \(p) OR pipeline = \(p))")
        }
        if let run = q.run { terms.append("run = \(bind(run))") }
        if let track = q.track { terms.append("track = \(bind(String(track)))") }
        if let c = q.cursor {
            let t = bind(String(c.firstSeenMicros))
            let i = bind(String(c.id))
            terms.append("(first_seen_us < \(t) OR (first_seen_us = \(t) AND id < \(i)))")
        }
        return (terms.isEmpty ? "" : "WHERE " + terms.joined(separator: " AND "), values)
    }

    /// A page's query: one row more than the page, to know whether another follows; newest first.
    /// The page is chosen first by its keys alone (`code`, `first_seen_us` and `id` are all in the code index, so a
    /// prefix matching thousands of rows is ranked from the index without reading their rows), and only its own
    /// rows are then read whole.
    static func searchSQL(_ clause: String, _ wanted: Int) -> (sql: String, limit: Int) {
        let limit = max(1, min(wanted, 10_000))
        let order = "ORDER BY first_seen_us DESC, id DESC"
        return (
            "SELECT \(columns) FROM sightings WHERE id IN (SELECT id FROM sightings \(clause) \(order) LIMIT \(limit + 1)) "
                + order,
            limit
        )
    }

    /// Clamped: a date past Int64's microseconds (year 292,277 and beyond) is a bound, never an overflow.
    static func micros(_ d: Date) -> Int64 {
        let us = (d.timeIntervalSince1970 * 1e6).rounded()
        return us.isNaN ? 0 : Int64(max(-9.2e18, min(9.2e18, us)))
    }

    /// A row from its columns' texts (nil for NULL), in ``columns``' order.
    static func row(_ c: [String?]) -> Sighting? {
        guard c.count == 15, let id = c[0].flatMap({ Int64($0) }), let run = c[1],
            let track = c[2].flatMap({ Int($0) }),
            let code = c[3], let first = c[8].flatMap({ Int64($0) }), let last = c[9].flatMap({ Int64($0) })
        else { return nil }
        return Sighting(
            run: run, track: track, code: code, symbology: c[4] ?? "", camera: c[5] ?? "", pipeline: c[6] ?? "",
            node: c[7] ?? "", firstSeen: Date(timeIntervalSince1970: Double(first) / 1e6),
            lastSeen: Date(timeIntervalSince1970: Double(last) / 1e6), frames: c[10].flatMap { Int($0) } ?? 0,
            polygon: Sighting.polygon(from: c[11] ?? "[]"), snapshot: c[12], recording: c[13],
            offsetSeconds: c[14].flatMap { Double($0) }.map { $0 / 1000 }, id: id)
    }

    /// A row's values for the upsert, in ``written``'s order: texts, and numbers kept as numbers (SQLite binds
    /// them so).
    static func fields(_ s: Sighting) -> [SightingField] {
        [
            .text(s.run), .number(Int64(s.track)), .text(s.code), .text(s.symbology), .text(s.camera),
            .text(s.pipeline), .text(s.node), .number(s.firstSeenMicros), .number(s.lastSeenMicros),
            .number(Int64(s.frames)), .text(s.polygonText), .text(s.snapshot), .text(s.recording),
            .number(s.offsetSeconds.map { Int64(($0 * 1000).rounded()) }), .number(day(ofMicros: s.firstSeenMicros)),
        ]
    }

    /// The same as texts (PostgreSQL's parameters and COPY lines), NULL as nil.
    static func values(_ s: Sighting) -> [String?] { fields(s).map(\.text) }

    /// The columns a row is written with, in ``values(_:)``'s order.
    static let written = [
        "run", "track", "code", "symbology", "camera", "pipeline", "node", "first_seen_us", "last_seen_us", "frames",
        "polygon", "snapshot", "recording", "offset_ms", "day",
    ]

    /// A row already there keeps its first sight and takes the newer end, frames and snapshot.
    static let onConflict = """
        ON CONFLICT (run, track) DO UPDATE SET
          last_seen_us = excluded.last_seen_us, frames = excluded.frames,
          snapshot = COALESCE(excluded.snapshot, sightings.snapshot)
        """

    /// The upsert of `rows` rows (their values one row after another). The rows of one statement must have distinct
    /// (run, track) (`merged`).
    static func upsert(rows: Int = 1, placeholder: (Int) -> String) -> String {
        let tuples = (0..<max(1, rows)).map { r in
            "(" + (1...written.count).map { placeholder(r * written.count + $0) }.joined(separator: ", ") + ")"
        }
        return "INSERT INTO sightings (\(written.joined(separator: ", "))) VALUES \(tuples.joined(separator: ", "))\n"
            + onConflict
    }

    /// The days table, and its days taken from the rows there (an index made before the days came into it).
    /// (`integer`: SQLite's INTEGER, whose primary key is the row's own number; PostgreSQL's BIGINT.)
    static func daysTable(integer: String) -> String {
        "CREATE TABLE IF NOT EXISTS sighting_days (day \(integer) PRIMARY KEY)"
    }
    /// (SQLite reads `ON CONFLICT` after a SELECT as a join's unless the SELECT has a WHERE.)
    static let daysFromRows =
        "INSERT INTO sighting_days (day) SELECT DISTINCT day FROM sightings WHERE true ON CONFLICT DO NOTHING"
    /// An index made before the days: its day column (a default while it is filled), its rows' days, the code
    /// index by code alone dropped (inside the caller's transaction).
    static func upgradeToDays(integer: String) -> [String] {
        [
            "ALTER TABLE sightings ADD COLUMN day \(integer) NOT NULL DEFAULT 0",
            "UPDATE sightings SET day = first_seen_us / \(dayMicros)", daysFromRows,
            "DROP INDEX IF EXISTS sightings_code",
        ]
    }
    /// The code index: day of first sight, code, then the page's order.
    static let codeIndex = "CREATE INDEX IF NOT EXISTS sightings_day_code ON sightings (day, code, first_seen_us, id)"
    /// Retention: days before the cutoff's (parameter 1, in microseconds) with no row left. (A newer day is left
    /// alone: a row being written into it by another connection is not seen yet.)
    static func emptyDaysGone(slot: String) -> String {
        "DELETE FROM sighting_days WHERE day < \(slot) / \(dayMicros) AND NOT EXISTS "
            + "(SELECT 1 FROM sightings WHERE sightings.day = sighting_days.day)"
    }

    /// PostgreSQL: a session's table for a batch on its way in (COPY), `n` its rows' order.
    static let stagingTable = """
        CREATE TEMPORARY TABLE IF NOT EXISTS sightings_staged (
          n INTEGER, run TEXT, track INTEGER, code TEXT, symbology TEXT, camera TEXT, pipeline TEXT, node TEXT,
          first_seen_us BIGINT, last_seen_us BIGINT, frames INTEGER, polygon TEXT, snapshot TEXT, recording TEXT,
          offset_ms BIGINT, day BIGINT) ON COMMIT DELETE ROWS
        """

    /// PostgreSQL: the staged batch into the index, in its order (the rows' ids follow it).
    static var upsertStaged: String {
        let names = written.joined(separator: ", ")
        return "INSERT INTO sightings (\(names)) SELECT \(names) FROM sightings_staged ORDER BY n\n" + onConflict
    }

    /// The rows with one row per (run, track), in the order each first came: a later row of the same sighting
    /// updates it as the upsert would (its end, frames and snapshot), so that one statement can hold them all.
    static func merged(_ rows: [Sighting]) -> [Sighting] {
        struct Key: Hashable {
            let run: String
            let track: Int
        }
        var order: [Key] = []
        var byKey: [Key: Sighting] = [:]
        for row in rows {
            let key = Key(run: row.run, track: row.track)
            if var kept = byKey[key] {
                kept.lastSeen = row.lastSeen
                kept.frames = row.frames
                kept.snapshot = row.snapshot ?? kept.snapshot
                byKey[key] = kept
            } else {
                byKey[key] = row
                order.append(key)
            }
        }
        return order.map { byKey[$0]! }
    }
}

/// One value of a row as a store binds it.
enum SightingField {
    case text(String?)
    case number(Int64?)

    var text: String? {
        switch self {
        case .text(let t): return t
        case .number(let n): return n.map { String($0) }
        }
    }
}

/// PostgreSQL's COPY text format: a value with its tab, newline, carriage return and backslash escaped, NULL as
/// `\N`.
enum CopyText {
    static func append(_ value: String?, to line: inout [UInt8]) {
        guard let value else {
            line.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "N")])
            return
        }
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): line.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\t"): line.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case UInt8(ascii: "\n"): line.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): line.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            default: line.append(byte)
            }
        }
    }
}

extension LedgerEngine {
    /// A page of sightings (``SightingIndexes/search(_:days:rows:)``), in this store's own SQL.
    func searchSightings(_ query: SightingQuery) throws -> SightingPage {
        try SightingIndexes.search(
            query,
            days: {
                let (sql, values) = SightingIndexes.daysSQL(query, placeholder: slot)
                return try self.query(sql, values).compactMap { $0[0].flatMap { Int64($0) } }
            },
            rows: { window, wanted in
                let (clause, values) = SightingIndexes.whereClause(
                    query, window: window, placeholder: slot, days: dayAmong)
                let (sql, _) = SightingIndexes.searchSQL(clause, wanted)
                return try self.query(sql, values).compactMap(SightingIndexes.row)
            })
    }
}
