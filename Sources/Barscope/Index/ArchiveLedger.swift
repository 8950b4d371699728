import Foundation

/// The `files` table beside the sightings: which recordings of an archive are indexed, and which worker scans which
/// now. A worker claims a file with a lease (PostgreSQL: `SELECT … FOR UPDATE SKIP LOCKED`, so workers never wait
/// on each other's rows), renews it while scanning, and completes it by writing its sightings and marking it done in
/// one transaction; a killed worker's lease runs out and another worker takes the file again. SQLite has one writer
/// at a time: the same table serves one process's resumption.
public protocol ArchiveLedger: AnyObject, Sendable {
    /// Adds the files (pending); a file already there with another size or last change is pending again.
    func register(_ files: [ArchiveFile]) throws
    /// The first of `paths` that is pending, or whose lease ran out, now leased to `owner` for `lease` seconds.
    func claim(among paths: [String], owner: String, lease: Double) throws -> ArchiveFile?
    /// Extends the lease; false when the file is no longer this owner's (its lease ran out and another took it).
    func renew(_ path: String, owner: String, lease: Double) throws -> Bool
    /// Replaces the file's sightings with `rows` and marks it done, in one transaction; false (nothing written) when
    /// the file is no longer this owner's.
    func complete(_ file: ArchiveFile, owner: String, rows: [Sighting]) throws -> Bool
    /// Marks the file bad, with the reason.
    func fail(_ path: String, owner: String, reason: String) throws
    /// The state of each of `paths` the table knows: pending, scanning, done or bad, and a bad file's reason.
    func states(of paths: [String]) throws -> [String: (state: String, message: String?)]
    /// Retention: deletes the sightings last seen before `cutoff`, but those of the recordings `sparing` names (being
    /// written: their rows go with them, later); returns how many, the files they named (recordings, snapshots)
    /// that no sighting left names, with the archive files last changed before it, and the recordings spared.
    func expire(before cutoff: Date, sparing: [String]) throws -> Expired
    /// Forgets files deleted from disk (the `files` table's rows).
    func forget(_ paths: [String]) throws
}

/// What ``ArchiveLedger/expire(before:sparing:)`` did.
public struct Expired: Sendable {
    public var rows: Int
    public var files: [String]
    public var spared: [String]
}

/// What the two engines say differently; the ledger's logic is written once over it (``LedgerEngine``'s extension).
protocol LedgerEngine: ArchiveLedger {
    /// One statement with bound parameters; its rows' texts (nil for NULL).
    func query(_ sql: String, _ values: [String?]) throws -> [[String?]]
    /// `?N` or `$N`.
    func slot(_ n: Int) -> String
    var beginWrite: String { get }
    /// The clock leases are measured by (PostgreSQL's, shared by every machine; SQLite's process's own).
    func nowMicros() throws -> Int64
    /// The rows' lock of a claim: `FOR UPDATE SKIP LOCKED` where several writers run at once.
    var claimLock: String { get }
    /// `COLUMN IN (...)` for a JSON array of texts given as the parameter `n`.
    func isIn(_ column: String, _ n: Int) -> String
    /// Writes the rows (the store's upsert), inside the caller's transaction.
    func upsert(_ rows: [Sighting]) throws
    /// The term that keeps the code index's days to those a subquery lists, each day looked up on its own.
    func dayAmong(_ subquery: String) -> String
}

extension LedgerEngine {
    static var filesTable: String {
        """
        CREATE TABLE IF NOT EXISTS files (
          path TEXT PRIMARY KEY, size BIGINT NOT NULL, mtime_us BIGINT NOT NULL, state TEXT NOT NULL,
          owner TEXT, lease_until_us BIGINT, run TEXT, sightings INTEGER, message TEXT, indexed_by TEXT)
        """
    }

    /// `body` in one write transaction: committed, or rolled back when it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        _ = try query(beginWrite, [])
        do {
            let value = try body()
            _ = try query("COMMIT", [])
            return value
        } catch {
            _ = try? query("ROLLBACK", [])
            throw error
        }
    }

    private static func json(_ paths: [String]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: paths, options: [.withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    func register(_ files: [ArchiveFile]) throws {
        let sql = """
            INSERT INTO files (path, size, mtime_us, state) VALUES (\(slot(1)), \(slot(2)), \(slot(3)), 'pending')
            ON CONFLICT (path) DO UPDATE SET size = excluded.size, mtime_us = excluded.mtime_us, state = 'pending',
              owner = NULL, lease_until_us = NULL, message = NULL
            WHERE files.size <> excluded.size OR files.mtime_us <> excluded.mtime_us
            """
        try transaction {
            for f in files { _ = try query(sql, [f.path, String(f.size), String(f.modifiedMicros)]) }
        }
    }

    func claim(among paths: [String], owner: String, lease: Double) throws -> ArchiveFile? {
        try transaction {
            let now = try nowMicros()
            let found = try query(
                """
                SELECT path, size, mtime_us FROM files WHERE \(isIn("path", 1))
                  AND (state = 'pending' OR (state = 'scanning' AND lease_until_us < \(slot(2))))
                ORDER BY path LIMIT 1 \(claimLock)
                """, [Self.json(paths), String(now)])
            guard let row = found.first, let path = row[0], let size = row[1].flatMap({ Int64($0) }),
                let modified = row[2].flatMap({ Int64($0) })
            else { return nil }
            _ = try query(
                "UPDATE files SET state = 'scanning', owner = \(slot(1)), lease_until_us = \(slot(2)) "
                    + "WHERE path = \(slot(3))",
                [owner, String(now + Int64(lease * 1e6)), path])
            return ArchiveFile(path: path, size: size, modifiedMicros: modified)
        }
    }

    func renew(_ path: String, owner: String, lease: Double) throws -> Bool {
        let until = try nowMicros() + Int64(lease * 1e6)
        return try !query(
            "UPDATE files SET lease_until_us = \(slot(1)) WHERE path = \(slot(2)) AND owner = \(slot(3)) "
                + "AND state = 'scanning' RETURNING path", [String(until), path, owner]
        ).isEmpty
    }

    func complete(_ file: ArchiveFile, owner: String, rows: [Sighting]) throws -> Bool {
        try transaction {
            // The rows of an earlier version of the file go with it.
            let earlier = try query("SELECT run FROM files WHERE path = \(slot(1))", [file.path]).first?[0] ?? nil
            let taken = try query(
                """
                UPDATE files SET state = 'done', owner = NULL, lease_until_us = NULL, run = \(slot(1)),
                  sightings = \(slot(2)), message = NULL, indexed_by = \(slot(4))
                WHERE path = \(slot(3)) AND owner = \(slot(4)) AND state = 'scanning'
                  AND size = \(slot(5)) AND mtime_us = \(slot(6)) RETURNING path
                """,
                [file.run, String(rows.count), file.path, owner, String(file.size), String(file.modifiedMicros)])
            guard !taken.isEmpty else { return false }
            for run in Set([file.run, earlier].compactMap { $0 }) {
                _ = try query("DELETE FROM sightings WHERE run = \(slot(1))", [run])
            }
            try upsert(rows)
            return true
        }
    }

    func fail(_ path: String, owner: String, reason: String) throws {
        _ = try query(
            "UPDATE files SET state = 'bad', owner = NULL, lease_until_us = NULL, message = \(slot(1)) "
                + "WHERE path = \(slot(2)) AND owner = \(slot(3))", [reason, path, owner])
    }

    func expire(before cutoff: Date, sparing: [String]) throws -> Expired {
        let values = [String(SightingIndexes.micros(cutoff)), Self.json(sparing)]
        let old = "last_seen_us < \(slot(1)) AND (recording IS NULL OR NOT " + isIn("recording", 2) + ")"
        let sparedOnes = "last_seen_us < \(slot(1)) AND " + isIn("recording", 2)
        return try transaction {
            let spared = try query("SELECT DISTINCT recording FROM sightings WHERE " + sparedOnes, values)
                .compactMap { $0[0] }
            let named = try query(
                "SELECT DISTINCT recording FROM sightings WHERE " + old + " AND recording IS NOT NULL "
                    + "UNION SELECT DISTINCT snapshot FROM sightings WHERE " + old + " AND snapshot IS NOT NULL",
                values
            ).compactMap { $0[0] }
            let rows = try query("DELETE FROM sightings WHERE " + old + " RETURNING id", values).count
            _ = try query(SightingIndexes.emptyDaysGone(slot: slot(1)), [values[0]])
            // A file still named by a newer sighting stays (a long recording's later codes).
            var files: [String] = []
            for f in named {
                let sql = "SELECT 1 FROM sightings WHERE recording = \(slot(1)) OR snapshot = \(slot(1)) LIMIT 1"
                if try query(sql, [f]).isEmpty { files.append(f) }
            }
            files += try query("SELECT path FROM files WHERE mtime_us < \(slot(1))", [values[0]]).compactMap { $0[0] }
            return Expired(rows: rows, files: Array(Set(files)).sorted(), spared: spared)
        }
    }

    func forget(_ paths: [String]) throws {
        guard !paths.isEmpty else { return }
        _ = try query("DELETE FROM files WHERE " + isIn("path", 1), [Self.json(paths)])
    }

    func states(of paths: [String]) throws -> [String: (state: String, message: String?)] {
        var states: [String: (state: String, message: String?)] = [:]
        for row in try query("SELECT path, state, message FROM files WHERE \(isIn("path", 1))", [Self.json(paths)]) {
            if let path = row[0], let state = row[1] { states[path] = (state, row[2]) }
        }
        return states
    }
}

/// A store that keeps what it is given: a file's rows, collected from its recorder to be written with the file's
/// completion in one transaction.
final class CollectingStore: SightingStore, @unchecked Sendable {
    // Sendable: `rows` is guarded by its lock.
    private let collected = Locked<[Sighting]>([])
    var rows: [Sighting] { collected.withLock { $0 } }
    func write(_ rows: [Sighting]) throws { collected.withLock { $0 += rows } }
    func search(_ query: SightingQuery) throws -> SightingPage { SightingPage(rows: [], limit: query.limit) }
    // An archive's scan opens no read cycle.
    func write(cycles: [CycleRow]) throws {}
    func searchCycles(_ query: CycleQuery) throws -> [CycleRow] { [] }
    func close() {}
}
