import Foundation

/// One sighting: a code coming into view until it is lost (a track), where and when, and where to see it again.
public struct Sighting: Sendable, Equatable {
    /// The run it was seen in (a new value every run) and its track there: together, the row's key, so a sighting
    /// written twice (its first sight, then its end; a batch sent again after a failure) is one row.
    public var run: String
    public var track: Int
    public var code: String
    public var symbology: String
    /// The camera: the service's instance, or a run's pipeline or source name.
    public var camera: String
    public var pipeline: String
    public var node: String
    /// UTC.
    public var firstSeen: Date
    public var lastSeen: Date
    public var frames: Int
    /// The polygon at first sight, in full-frame pixels.
    public var polygon: [Point]
    public var snapshot: String?
    /// The recording file holding the first sight (a segment's own file), and the time of first sight in it.
    public var recording: String?
    public var offsetSeconds: Double?
    /// The database's own row number (keyset paging's tie-break); nil before it is written.
    public var id: Int64?

    public init(
        run: String, track: Int, code: String, symbology: String, camera: String, pipeline: String, node: String,
        firstSeen: Date, lastSeen: Date, frames: Int, polygon: [Point], snapshot: String? = nil,
        recording: String? = nil, offsetSeconds: Double? = nil, id: Int64? = nil
    ) {
        self.run = run
        self.track = track
        self.code = code
        self.symbology = symbology
        self.camera = camera
        self.pipeline = pipeline
        self.node = node
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.frames = frames
        self.polygon = polygon
        self.snapshot = snapshot
        self.recording = recording
        self.offsetSeconds = offsetSeconds
        self.id = id
    }

    /// The row as JSON (the service's answers, `search --json`).
    public var json: JSONValue {
        var f: [(String, JSONValue)] = [
            ("code", .string(code)), ("type", .string(symbology)), ("camera", .string(camera)),
            ("pipeline", .string(pipeline)), ("node", .string(node)),
            ("first_seen", .string(Self.utc(firstSeen))), ("last_seen", .string(Self.utc(lastSeen))),
            ("frames", .int(frames)),
            ("polygon", .array(polygon.map { .array([.int(Int($0.x.rounded())), .int(Int($0.y.rounded()))]) })),
        ]
        if let snapshot { f.append(("snapshot", .string(snapshot))) }
        if let recording { f.append(("recording", .string(recording))) }
        if let offsetSeconds { f.append(("offset_s", .double((offsetSeconds * 1000).rounded() / 1000))) }
        f += [("run", .string(run)), ("track", .int(track))]
        return .object(f)
    }

    /// A row from its JSON (``json``), as the spool keeps it; nil when a field is missing.
    init?(json o: [String: Any]) {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let run = o["run"] as? String, let track = o["track"] as? Int, let code = o["code"] as? String,
            let first = (o["first_seen"] as? String).flatMap(f.date),
            let last = (o["last_seen"] as? String).flatMap(f.date)
        else { return nil }
        self.init(
            run: run, track: track, code: code, symbology: o["type"] as? String ?? "",
            camera: o["camera"] as? String ?? "",
            pipeline: o["pipeline"] as? String ?? "", node: o["node"] as? String ?? "", firstSeen: first,
            lastSeen: last,
            frames: o["frames"] as? Int ?? 0,
            polygon: (o["polygon"] as? [[Double]] ?? []).compactMap { $0.count == 2 ? Point($0[0], $0[1]) : nil },
            snapshot: o["snapshot"] as? String, recording: o["recording"] as? String,
            offsetSeconds: o["offset_s"] as? Double)
    }

    /// One CSV line (RFC 4180 quoting), in the order of ``csvHeader``.
    public var csv: String {
        let fields: [String] = [
            code, symbology, camera, pipeline, node, Self.utc(firstSeen), Self.utc(lastSeen), String(frames),
            snapshot ?? "", recording ?? "", offsetSeconds.map { String(format: "%.3f", $0) } ?? "",
        ]
        return fields.map(Self.quoted).joined(separator: ",")
    }

    public static let csvHeader =
        "code,type,camera,pipeline,node,first_seen,last_seen,frames,snapshot,recording,offset_s"

    static func quoted(_ field: String) -> String {
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// ISO 8601 in UTC with milliseconds: 2026-12-06T10:15:02.250Z.
    public static func utc(_ date: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: date)
    }

    var firstSeenMicros: Int64 { Int64((firstSeen.timeIntervalSince1970 * 1e6).rounded()) }
    var lastSeenMicros: Int64 { Int64((lastSeen.timeIntervalSince1970 * 1e6).rounded()) }

    var polygonText: String {
        "[" + polygon.map { "[\(Int($0.x.rounded())),\(Int($0.y.rounded()))]" }.joined(separator: ",") + "]"
    }

    static func polygon(from text: String) -> [Point] {
        guard let data = text.data(using: .utf8),
            let pairs = (try? JSONSerialization.jsonObject(with: data)) as? [[Double]]
        else { return [] }
        return pairs.compactMap { $0.count == 2 ? Point($0[0], $0[1]) : nil }
    }
}

/// What a search asks: a code (exact, or a prefix), a time window, a camera; a page of `limit` rows after `cursor`.
public struct SightingQuery: Sendable, Equatable {
    public var code: String?
    public var prefix = false
    public var from: Date?
    public var to: Date?
    public var camera: String?
    /// One sighting by its key (the recording route's look-up).
    public var run: String?
    public var track: Int?
    public var limit = 100
    /// The last row of the page before: newest first, so the next page is older than it.
    public var cursor: Cursor?

    public init(
        code: String? = nil, prefix: Bool = false, from: Date? = nil, to: Date? = nil, camera: String? = nil,
        limit: Int = 100, cursor: Cursor? = nil, run: String? = nil, track: Int? = nil
    ) {
        self.run = run
        self.track = track
        self.code = code
        self.prefix = prefix
        self.from = from
        self.to = to
        self.camera = camera
        self.limit = limit
        self.cursor = cursor
    }

    /// Keyset paging's position: the first-seen time and row number of the last row given.
    public struct Cursor: Sendable, Equatable {
        public var firstSeenMicros: Int64
        public var id: Int64

        /// `MICROS.ID`, opaque to clients.
        public var text: String { "\(firstSeenMicros).\(id)" }

        public init(firstSeenMicros: Int64, id: Int64) {
            self.firstSeenMicros = firstSeenMicros
            self.id = id
        }

        public init?(_ text: String) {
            let parts = text.split(separator: ".")
            guard parts.count == 2, let t = Int64(parts[0]), let i = Int64(parts[1]) else { return nil }
            self.init(firstSeenMicros: t, id: i)
        }
    }

    /// The smallest text greater than every text starting with `prefix` (the exclusive upper bound of a prefix
    /// range, which an index can serve where `LIKE` with a bound parameter cannot in every engine).
    static func upperBound(ofPrefix prefix: String) -> String {
        var scalars = Array(prefix.unicodeScalars)
        while let last = scalars.popLast() {
            if last.value < 0x10FFFF, let next = Unicode.Scalar(last.value + 1) {
                scalars.append(next)
                var s = ""
                s.unicodeScalars.append(contentsOf: scalars)
                return s
            }
        }
        return "\u{10FFFF}"
    }
}

/// One page of a search, and the cursor of the next (nil at the end).
public struct SightingPage: Sendable {
    public var sightings: [Sighting]
    public var next: SightingQuery.Cursor?

    /// From the rows of ``SightingIndexes/searchSQL``: the extra row, if any, says another page follows, after the
    /// page's last row.
    init(rows: [Sighting], limit: Int) {
        sightings = Array(rows.prefix(limit))
        next = nil
        if rows.count > limit, let last = sightings.last, let id = last.id {
            next = SightingQuery.Cursor(firstSeenMicros: last.firstSeenMicros, id: id)
        }
    }
}

/// Times as users give them: ISO 8601 (`2026-12-06T10:00:00Z`, a date alone, a local time without zone) or relative
/// to now (`-2h`, `-30m`, `-7d`, `-45s`).
public enum TimeArgument {
    public static func parse(_ text: String, now: Date = Date()) throws -> Date {
        let t = text.trimmingCharacters(in: .whitespaces)
        if let m = t.wholeMatch(of: /-(\d+(?:\.\d+)?)([smhdw])/), let n = Double(m.1) {
            let unit: Double = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800][String(m.2)]!
            // Past a century a time is a mistake; past 292,000 years its microseconds overflowed and stopped the
            // service (a generated request found it: `from=-99999999999999999999w`).
            guard n * unit <= 100 * 365.25 * 86_400 else {
                throw BarscopeError.badValue("time '\(text)': at most 100 years back")
            }
            return now.addingTimeInterval(-n * unit)
        }
        let full = ISO8601DateFormatter()
        for options: ISO8601DateFormatter.Options in [
            [.withInternetDateTime, .withFractionalSeconds], [.withInternetDateTime],
        ] {
            full.formatOptions = options
            if let d = full.date(from: t) { return d }
        }
        // Without a zone: the machine's local time, as `date` shows it.
        let local = DateFormatter()
        local.locale = Locale(identifier: "en_US_POSIX")
        local.timeZone = TimeZone.current
        for format in ["yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd"] {
            local.dateFormat = format
            if let d = local.date(from: t) { return d }
        }
        throw BarscopeError.badValue(
            "time '\(text)': expected ISO 8601 (2026-12-06T10:00:00Z, 2026-12-06) or relative (-2h, -30m, -7d)")
    }
}
