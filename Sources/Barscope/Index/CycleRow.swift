import Foundation

/// One read cycle's result in the index: its label, good / noread / multiple / mismatch, the codes it read, when
/// (UTC) and where (camera, recording and the time of its opening in it). Keyed by run and cycle number, as a
/// sighting is by run and track: written again, it is one row.
public struct CycleRow: Sendable, Equatable {
    public var run: String
    public var cycle: Int
    public var label: String?
    public var result: String
    /// TYPE:data of each code read, and whether it was expected.
    public var codes: [(code: String, expected: Bool)]
    public var camera: String
    public var pipeline: String
    public var node: String
    public var opened: Date
    public var closed: Date
    public var snapshot: String?
    public var recording: String?
    public var offsetSeconds: Double?

    public static func == (a: CycleRow, b: CycleRow) -> Bool { a.json == b.json }

    public var json: JSONValue {
        var f: [(String, JSONValue)] = [
            ("cycle", .int(cycle)), ("label", label.map { .string($0) } ?? .null), ("result", .string(result)),
            (
                "codes",
                .array(codes.map { .object([("code", .string($0.code)), ("expected", .bool($0.expected))]) })
            ),
            ("camera", .string(camera)), ("pipeline", .string(pipeline)), ("node", .string(node)),
            ("opened", .string(Sighting.utc(opened))), ("closed", .string(Sighting.utc(closed))),
        ]
        if let snapshot { f.append(("snapshot", .string(snapshot))) }
        if let recording { f.append(("recording", .string(recording))) }
        if let offsetSeconds { f.append(("offset_s", .double((offsetSeconds * 1000).rounded() / 1000))) }
        f.append(("run", .string(run)))
        return .object(f)
    }

    /// The codes column: `[["EAN-13:4006381333931", true], ...]`.
    var codesText: String { JSONValue.array(codes.map { .array([.string($0.code), .bool($0.expected)]) }).encoded() }

    static func codes(from text: String) -> [(code: String, expected: Bool)] {
        guard let pairs = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[Any]] else { return [] }
        return pairs.compactMap { p in
            guard p.count == 2, let c = p[0] as? String else { return nil }
            return (c, (p[1] as? Bool) ?? false)
        }
    }

    public static let csvHeader = "opened,closed,result,label,camera,codes,recording,offset_s"

    public var csv: String {
        [
            Sighting.utc(opened), Sighting.utc(closed), result, label ?? "", camera,
            codes.map(\.code).joined(separator: " "), recording ?? "",
            offsetSeconds.map { String(format: "%.3f", $0) } ?? "",
        ].map(Sighting.quoted).joined(separator: ",")
    }

    static let columns =
        "run, cycle, label, result, codes, camera, pipeline, node, opened_us, closed_us, snapshot, recording, offset_ms"

    var values: [String?] {
        [
            run, String(cycle), label, result, codesText, camera, pipeline, node,
            String(SightingIndexes.micros(opened)), String(SightingIndexes.micros(closed)), snapshot, recording,
            offsetSeconds.map { String(Int64(($0 * 1000).rounded())) },
        ]
    }

    init?(_ c: [String?]) {
        guard c.count == 13, let run = c[0], let cycle = c[1].flatMap({ Int($0) }), let result = c[3],
            let opened = c[8].flatMap({ Int64($0) }), let closed = c[9].flatMap({ Int64($0) })
        else { return nil }
        self.init(
            run: run, cycle: cycle, label: c[2], result: result, codes: Self.codes(from: c[4] ?? "[]"),
            camera: c[5] ?? "", pipeline: c[6] ?? "", node: c[7] ?? "",
            opened: Date(timeIntervalSince1970: Double(opened) / 1e6),
            closed: Date(timeIntervalSince1970: Double(closed) / 1e6), snapshot: c[10], recording: c[11],
            offsetSeconds: c[12].flatMap { Double($0) }.map { $0 / 1000 })
    }

    public init(
        run: String, cycle: Int, label: String?, result: String, codes: [(code: String, expected: Bool)],
        camera: String, pipeline: String, node: String, opened: Date, closed: Date, snapshot: String? = nil,
        recording: String? = nil, offsetSeconds: Double? = nil
    ) {
        self.run = run
        self.cycle = cycle
        self.label = label
        self.result = result
        self.codes = codes
        self.camera = camera
        self.pipeline = pipeline
        self.node = node
        self.opened = opened
        self.closed = closed
        self.snapshot = snapshot
        self.recording = recording
        self.offsetSeconds = offsetSeconds
    }
}

/// What a search of cycles asks: a result, a label, a camera, a time window on the opening; newest first.
public struct CycleQuery: Sendable {
    public var result: String?
    public var label: String?
    public var camera: String?
    public var from: Date?
    public var to: Date?
    public var limit = 100
    /// One cycle: its run and number.
    public var run: String?
    public var cycle: Int?
    public init() {}
}

/// The cycles table's SQL, the same for both engines but for its row number's type.
enum CycleSQL {
    static func table(idColumn: String) -> [String] {
        [
            """
            CREATE TABLE IF NOT EXISTS cycles (
              id \(idColumn), run TEXT NOT NULL, cycle INTEGER NOT NULL, label TEXT, result TEXT NOT NULL,
              codes TEXT NOT NULL, camera TEXT NOT NULL, pipeline TEXT NOT NULL, node TEXT NOT NULL,
              opened_us BIGINT NOT NULL, closed_us BIGINT NOT NULL, snapshot TEXT, recording TEXT, offset_ms BIGINT,
              UNIQUE (run, cycle))
            """,
            "CREATE INDEX IF NOT EXISTS cycles_time ON cycles (opened_us, id)",
        ]
    }

    static func write(_ rows: [CycleRow], _ engine: LedgerEngine) throws {
        let slots = (1...13).map(engine.slot).joined(separator: ", ")
        let sql = """
            INSERT INTO cycles (\(CycleRow.columns)) VALUES (\(slots))
            ON CONFLICT (run, cycle) DO UPDATE SET label = excluded.label, result = excluded.result,
              codes = excluded.codes, closed_us = excluded.closed_us, snapshot = excluded.snapshot
            """
        for row in rows { _ = try engine.query(sql, row.values) }
    }

    static func search(_ q: CycleQuery, _ engine: LedgerEngine) throws -> [CycleRow] {
        var terms: [String] = []
        var values: [String?] = []
        func bind(_ v: String) -> String {
            values.append(v)
            return engine.slot(values.count)
        }
        if let r = q.result { terms.append("result = \(bind(r))") }
        if let l = q.label { terms.append("label = \(bind(l))") }
        if let c = q.camera {
            let p = bind(c)
            terms.append("(camera = \(p) OR pipeline = \(p))")
        }
        if let f = q.from { terms.append("opened_us >= \(bind(String(SightingIndexes.micros(f))))") }
        if let t = q.to { terms.append("opened_us <= \(bind(String(SightingIndexes.micros(t))))") }
        if let r = q.run { terms.append("run = \(bind(r))") }
        if let n = q.cycle { terms.append("cycle = \(bind(String(n)))") }
        let clause = terms.isEmpty ? "" : "WHERE " + terms.joined(separator: " AND ")
        let limit = max(1, min(q.limit, 10_000))
        return try engine.query(
            "SELECT \(CycleRow.columns) FROM cycles \(clause) ORDER BY opened_us DESC, id DESC LIMIT \(limit)", values
        ).compactMap(CycleRow.init)
    }
}
