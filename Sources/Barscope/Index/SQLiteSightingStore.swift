import CSQLite
import Foundation

/// The embedded index: one SQLite file in WAL mode (readers never wait for the writer, a crash loses nothing
/// committed). A file that is not an SQLite database, or one that holds other tables than ours, is refused and never
/// written.
final class SQLiteSightingStore: SightingStore, @unchecked Sendable {
    // Sendable: one thread at a time uses it (see SightingStore).
    private var db: OpaquePointer?
    let path: String
    /// The application id stamped in the file's header ("BSCP"): how an index of ours is told from another database.
    static let applicationID: Int32 = 0x4253_4350

    init(path: String) throws {
        self.path = path
        let exists = FileManager.default.fileExists(atPath: path)
        // Its first 16 bytes say whether it is an SQLite database at all.
        let handle = exists ? FileHandle(forReadingAtPath: path) : nil
        let head = (try? handle?.read(upToCount: 16)) ?? nil
        try? handle?.close()
        if let head, !head.isEmpty, head != Data("SQLite format 3\0".utf8) {
            throw BarscopeError.badInput("\(path): not a sightings index (not an SQLite database); left as it is")
        }
        // One thread at a time uses a store (see SightingStore): SQLite's own locks on every call would guard
        // nothing.
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        guard sqlite3_open_v2(path, &db, flags, nil) == SQLITE_OK else {
            let reason = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close(db)
            db = nil
            throw BarscopeError.badInput("\(path): cannot open the index (\(reason))")
        }
        sqlite3_busy_timeout(db, 5000)
        do {
            let id = try scalar("PRAGMA application_id")
            let tables = try scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table'")
            if id != Int64(Self.applicationID) && (id != 0 || tables != 0) {
                throw BarscopeError.badInput(
                    "\(path): not a sightings index (an SQLite database of something else); left as it is")
            }
            try execute("PRAGMA journal_mode = WAL")
            try execute("PRAGMA synchronous = NORMAL")
            // The code index takes rows in random order: a batch dirties a page of it for nearly every row. A page
            // cache of up to 64 MB (filled only as pages are used) holds a batch's pages until its commit; during
            // a burst of writes the WAL is written back into the file every 256 MB only (a page dirtied by many
            // batches is written back once), and otherwise when the writer has nothing waiting (`settle`). A
            // larger WAL slows searches made meanwhile (docs/decisions.md).
            try execute("PRAGMA cache_size = -65536")
            try execute("PRAGMA wal_autocheckpoint = 65536")
            // Pages read through a mapping of the file rather than copied in by read calls (up to 4 GB of it).
            try execute("PRAGMA mmap_size = 4294967296")
            try execute("PRAGMA application_id = \(Self.applicationID)")
            try execute(
                """
                CREATE TABLE IF NOT EXISTS sightings (
                  id INTEGER PRIMARY KEY, run TEXT NOT NULL, track INTEGER NOT NULL, code TEXT NOT NULL,
                  symbology TEXT NOT NULL, camera TEXT NOT NULL, pipeline TEXT NOT NULL, node TEXT NOT NULL,
                  first_seen_us INTEGER NOT NULL, last_seen_us INTEGER NOT NULL, frames INTEGER NOT NULL,
                  polygon TEXT NOT NULL, snapshot TEXT, recording TEXT, offset_ms INTEGER, day INTEGER NOT NULL,
                  UNIQUE (run, track))
                """)
            try execute(SightingIndexes.daysTable(integer: "INTEGER"))
            // An index made before the code index was ordered by day: its rows' days, once.
            let hasDays = "SELECT count(*) FROM pragma_table_info('sightings') WHERE name = 'day'"
            if try scalar(hasDays) == 0 {
                try execute("BEGIN IMMEDIATE")
                do {
                    // (Looked at again once the file is ours alone: another process may have done it meanwhile.)
                    if try scalar(hasDays) == 0 {
                        for sql in SightingIndexes.upgradeToDays(integer: "INTEGER") { try execute(sql) }
                    }
                    try execute("COMMIT")
                } catch {
                    _ = try? execute("ROLLBACK")
                    throw error
                }
            }
            try execute(SightingIndexes.codeIndex)
            try execute("CREATE INDEX IF NOT EXISTS sightings_time ON sightings (first_seen_us, id)")
            try execute(Self.filesTable)
            for sql in CycleSQL.table(idColumn: "INTEGER PRIMARY KEY") { try execute(sql) }
        } catch {
            close()
            throw error
        }
    }

    func close() {
        if let db { sqlite3_close_v2(db) }
        db = nil
    }

    deinit { close() }

    private var message: String { db.map { String(cString: sqlite3_errmsg($0)) } ?? "closed" }

    private func execute(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw BarscopeError.badInput("\(path): \(message)")
        }
    }

    private func scalar(_ sql: String) throws -> Int64 {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            throw BarscopeError.badInput("\(path): not a sightings index (\(message)); left as it is")
        }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { return 0 }
        return sqlite3_column_int64(statement, 0)
    }

    /// SQLite copies a bound text at once (SQLITE_TRANSIENT): the Swift string's buffer may go.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private func bind(_ statement: OpaquePointer?, _ values: [String?]) {
        for (i, v) in values.enumerated() {
            if let v {
                sqlite3_bind_text(statement, Int32(i + 1), v, -1, Self.transient)
            } else {
                sqlite3_bind_null(statement, Int32(i + 1))
            }
        }
    }

    func write(_ rows: [Sighting]) throws {
        guard !rows.isEmpty else { return }
        try transaction { try upsert(rows) }
    }

    func write(cycles: [CycleRow]) throws {
        guard !cycles.isEmpty else { return }
        try transaction { try CycleSQL.write(cycles, self) }
    }

    func searchCycles(_ query: CycleQuery) throws -> [CycleRow] { try CycleSQL.search(query, self) }

    /// A checkpoint that waits for no reader: what readers still use is written back at the next one.
    func settle() { sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil) }

    /// The rows, inside the caller's transaction.
    func upsert(_ rows: [Sighting]) throws {
        var statement: OpaquePointer?
        guard
            sqlite3_prepare_v2(db, SightingIndexes.upsert(placeholder: { "?\($0)" }), -1, &statement, nil)
                == SQLITE_OK
        else { throw BarscopeError.badInput("\(path): \(message)") }
        defer { sqlite3_finalize(statement) }
        for row in rows {
            sqlite3_reset(statement)
            bind(statement, row)
            guard sqlite3_step(statement) == SQLITE_DONE else {
                throw BarscopeError.badInput("\(path): \(message)")
            }
        }
        for day in Set(rows.map { SightingIndexes.day(ofMicros: $0.firstSeenMicros) }) {
            try execute("INSERT INTO sighting_days (day) VALUES (\(day)) ON CONFLICT DO NOTHING")
        }
    }

    /// A row's values bound in the upsert's order (``SightingIndexes/fields(_:)``), numbers as numbers.
    private func bind(_ statement: OpaquePointer?, _ s: Sighting) {
        for (i, field) in SightingIndexes.fields(s).enumerated() {
            let n = Int32(i + 1)
            switch field {
            case .text(let v?): sqlite3_bind_text(statement, n, v, -1, Self.transient)
            case .number(let v?): sqlite3_bind_int64(statement, n, v)
            case .text(nil), .number(nil): sqlite3_bind_null(statement, n)
            }
        }
    }

    /// One statement with its parameters bound; its rows' texts (NULL as nil).
    func query(_ sql: String, _ values: [String?]) throws -> [[String?]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            throw BarscopeError.badInput("\(path): \(message)")
        }
        defer { sqlite3_finalize(statement) }
        bind(statement, values)
        var rows: [[String?]] = []
        var step = sqlite3_step(statement)
        while step == SQLITE_ROW {
            rows.append(
                (0..<sqlite3_column_count(statement)).map { i -> String? in
                    guard sqlite3_column_type(statement, i) != SQLITE_NULL, let text = sqlite3_column_text(statement, i)
                    else { return nil }
                    return String(cString: text)
                })
            step = sqlite3_step(statement)
        }
        // Rows cut short by an error (busy, I/O) are an error, not the end.
        guard step == SQLITE_DONE else { throw BarscopeError.badInput("\(path): \(message)") }
        return rows
    }

    func search(_ query: SightingQuery) throws -> SightingPage { try searchSightings(query) }
}

/// One process writes an SQLite index at a time: no row locks to skip, the transaction holds the file.
extension SQLiteSightingStore: LedgerEngine {
    func slot(_ n: Int) -> String { "?\(n)" }
    var beginWrite: String { "BEGIN IMMEDIATE" }
    func nowMicros() throws -> Int64 { Int64(Date().timeIntervalSince1970 * 1e6) }
    var claimLock: String { "" }
    func isIn(_ column: String, _ n: Int) -> String { "\(column) IN (SELECT value FROM json_each(?\(n)))" }
    func dayAmong(_ subquery: String) -> String { "day IN (\(subquery))" }
}
