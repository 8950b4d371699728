import CPostgres
import Foundation

/// The index several nodes of a site share: a PostgreSQL database (libpq), the same table as the SQLite file's,
/// every value a bound parameter. A connection that breaks is made again at the next call.
final class PostgresSightingStore: SightingStore, @unchecked Sendable {
    // Sendable: one thread at a time uses it (see SightingStore).
    private var connection: OpaquePointer?
    let url: String
    private var shown: String { SightingIndexes.shown(url) }

    init(url: String) throws {
        self.url = url
        try connect()
        // One node at a time makes the table (CREATE ... IF NOT EXISTS races on PostgreSQL's catalogue).
        try execute("SELECT pg_advisory_lock(4253435001)")
        defer { _ = try? execute("SELECT pg_advisory_unlock(4253435001)") }
        try execute(
            """
            CREATE TABLE IF NOT EXISTS sightings (
              id BIGSERIAL PRIMARY KEY, run TEXT NOT NULL, track INTEGER NOT NULL, code TEXT COLLATE "C" NOT NULL,
              symbology TEXT NOT NULL, camera TEXT NOT NULL, pipeline TEXT NOT NULL, node TEXT NOT NULL,
              first_seen_us BIGINT NOT NULL, last_seen_us BIGINT NOT NULL, frames INTEGER NOT NULL,
              polygon TEXT NOT NULL, snapshot TEXT, recording TEXT, offset_ms BIGINT, day BIGINT NOT NULL,
              UNIQUE (run, track))
            """)
        try execute(SightingIndexes.daysTable(integer: "BIGINT"))
        // An index made before the code index was ordered by day: its rows' days, once.
        if try execute(
            "SELECT 1 FROM information_schema.columns WHERE table_name = 'sightings' AND column_name = 'day' "
                + "AND table_schema = current_schema()"
        ).isEmpty {
            try transaction {
                for sql in SightingIndexes.upgradeToDays(integer: "BIGINT") { try execute(sql) }
                // A node not yet upgraded that writes here now fails (and keeps its rows in its spool) rather than
                // writing rows of day 0, which a search by code would never look in.
                try execute("ALTER TABLE sightings ALTER COLUMN day DROP DEFAULT")
            }
        }
        try execute(SightingIndexes.codeIndex)
        try execute("CREATE INDEX IF NOT EXISTS sightings_time ON sightings (first_seen_us, id)")
        try execute(Self.filesTable)
        for sql in CycleSQL.table(idColumn: "BIGSERIAL PRIMARY KEY") { try execute(sql) }
    }

    private func connect() throws {
        if let c = connection, PQstatus(c) == CONNECTION_OK { return }
        if let c = connection { PQfinish(c) }
        // Two seconds to connect: an unreachable server is said at once, not after the operating system's minutes.
        let withTimeout = url + (url.contains("?") ? "&" : "?") + "connect_timeout=2"
        connection = PQconnectdb(withTimeout)
        guard let c = connection, PQstatus(c) == CONNECTION_OK else {
            let reason = connection.map { Self.firstLine(String(cString: PQerrorMessage($0))) } ?? "no connection"
            if let c = connection { PQfinish(c) }
            connection = nil
            throw BarscopeError.badInput("\(shown): cannot connect to the index (\(reason))")
        }
        // A session's own table for a batch on its way in (no WAL: temporary; emptied at each commit).
        try execute(SightingIndexes.stagingTable)
    }

    static func firstLine(_ text: String) -> String {
        text.split(separator: "\n").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? text
    }

    func close() {
        if let c = connection { PQfinish(c) }
        connection = nil
    }

    deinit { close() }

    /// Runs one statement with its parameters bound (text format); the rows' texts, NULL as nil.
    @discardableResult
    private func execute(_ sql: String, _ values: [String?] = []) throws -> [[String?]] {
        try connect()
        // The parameters' C strings live until PQexecParams returns.
        let copies: [UnsafeMutablePointer<CChar>?] = values.map { v in v.flatMap { strdup($0) } }
        defer { copies.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } }
        let result = pointers.withUnsafeBufferPointer {
            PQexecParams(connection, sql, Int32(values.count), nil, $0.baseAddress, nil, nil, 0)
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let reason = Self.firstLine(String(cString: PQresultErrorMessage(result)))
            if PQstatus(connection) != CONNECTION_OK { close() }
            throw BarscopeError.badInput("\(shown): \(reason.isEmpty ? "the connection broke" : reason)")
        }
        var rows: [[String?]] = []
        for r in 0..<PQntuples(result) {
            rows.append(
                (0..<PQnfields(result)).map { f in
                    PQgetisnull(result, r, f) == 1 ? nil : String(cString: PQgetvalue(result, r, f))
                })
        }
        return rows
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

    func search(_ query: SightingQuery) throws -> SightingPage { try searchSightings(query) }
}

/// Several workers on several machines: a claim skips the rows others have locked, and leases run on the
/// server's clock (the machines' own clocks may disagree).
extension PostgresSightingStore: LedgerEngine {
    func query(_ sql: String, _ values: [String?]) throws -> [[String?]] { try execute(sql, values) }
    func slot(_ n: Int) -> String { "$\(n)" }
    var beginWrite: String { "BEGIN" }
    func nowMicros() throws -> Int64 {
        let now = try execute("SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint")
        guard let text = now.first?[0] ?? nil, let micros = Int64(text) else {
            throw BarscopeError.badInput("\(SightingIndexes.shown(url)): no clock")
        }
        return micros
    }
    var claimLock: String { "FOR UPDATE SKIP LOCKED" }
    func isIn(_ column: String, _ n: Int) -> String { "\(column) IN (SELECT jsonb_array_elements_text($\(n)::jsonb))" }
    /// (An IN subquery may be planned as a join over the whole index; an array is looked up day by day.)
    func dayAmong(_ subquery: String) -> String { "day = ANY(ARRAY(\(subquery)))" }

    /// The rows, inside the caller's transaction: streamed by COPY into this session's staging table, then moved
    /// into the index by one upsert. The server parses the rows as they come (a batch is one statement to plan, not
    /// one for each 400 rows), and the client only writes lines: one core each, not one waiting on the other.
    func upsert(_ rows: [Sighting]) throws {
        let merged = SightingIndexes.merged(rows)
        guard !merged.isEmpty else { return }
        try connect()
        try copy(merged)
        try execute(SightingIndexes.upsertStaged)
        try execute("INSERT INTO sighting_days (day) SELECT DISTINCT day FROM sightings_staged ON CONFLICT DO NOTHING")
    }

    /// The rows into `sightings_staged` (COPY's text format), numbered in their order.
    private func copy(_ rows: [Sighting]) throws {
        let started = PQexec(connection, "COPY sightings_staged FROM STDIN")
        let status = PQresultStatus(started)
        let reason = Self.firstLine(String(cString: PQresultErrorMessage(started)))
        PQclear(started)
        guard status == PGRES_COPY_IN else { throw failed(reason) }
        var line: [UInt8] = []
        line.reserveCapacity(1 << 16)
        var sent = true
        for (n, row) in rows.enumerated() {
            CopyText.append(String(n), to: &line)
            for value in SightingIndexes.values(row) {
                line.append(UInt8(ascii: "\t"))
                CopyText.append(value, to: &line)
            }
            line.append(UInt8(ascii: "\n"))
            if line.count >= 1 << 16 {
                sent = sent && send(line)
                line.removeAll(keepingCapacity: true)
            }
        }
        sent = sent && send(line)
        PQputCopyEnd(connection, sent ? nil : "the rows could not be sent")
        var failure: String?
        while let result = PQgetResult(connection) {
            if PQresultStatus(result) != PGRES_COMMAND_OK {
                failure = failure ?? Self.firstLine(String(cString: PQresultErrorMessage(result)))
            }
            PQclear(result)
        }
        if let failure { throw failed(failure) }
    }

    private func send(_ bytes: [UInt8]) -> Bool {
        bytes.isEmpty
            || bytes.withUnsafeBufferPointer { b in
                b.withMemoryRebound(to: CChar.self) { PQputCopyData(connection, $0.baseAddress, Int32($0.count)) == 1 }
            }
    }

    private func failed(_ reason: String) -> BarscopeError {
        if PQstatus(connection) != CONNECTION_OK { close() }
        return BarscopeError.badInput("\(shown): \(reason.isEmpty ? "the connection broke" : reason)")
    }
}
