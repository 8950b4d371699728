import Barscope
import Foundation
import TestSupport
import Testing

/// The sightings index at size, in SQLite or PostgreSQL (a benchmark, not a timed test: `scripts/bench index` runs it, with the number of
/// rows in `BARSCOPE_BENCH_INDEX_ROWS`): rows written in batches as the recorder writes them, then exact-code searches
/// and prefix searches of 100 results, each timed; the p50 and p95 printed, and written to bench-out/index.json.
/// A benchmark of minutes, not a test: an hour's limit of its own rather than the suites' 10 minutes.
@Suite(.timeLimit(.minutes(60)))
struct IndexBenchmark {
    static let rows = ProcessInfo.processInfo.environment["BARSCOPE_BENCH_INDEX_ROWS"].flatMap { Int($0) }

    @Test(.enabled(if: IndexBenchmark.rows != nil, "a benchmark of minutes: scripts/bench index runs it"))
    func tenMillionSightings() throws {
        let total = try #require(Self.rows)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bench-index-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // BARSCOPE_BENCH_INDEX_URL: an empty PostgreSQL database instead (`scripts/bench index --postgres`).
        let url = ProcessInfo.processInfo.environment["BARSCOPE_BENCH_INDEX_URL"]
        let store = try SightingIndexes.open(url ?? folder.appendingPathComponent("index.sqlite").path)
        defer { store.close() }
        // A site's month: a code seen about ten times (a parcel at several docks), 30 days of first sights.
        let codes = max(1, total / 10)
        var random = SystemRandomNumberGenerator()
        func code(_ n: Int) -> String { String(format: "400%010d", (n &* 7_919) % 10_000_000_000) }
        let start = Date().addingTimeInterval(-30 * 86_400)
        // BARSCOPE_BENCH_INDEX_BATCH: rows a write (`scripts/bench index --batch N`); a recorder catching up after
        // an outage writes its whole backlog at once.
        let batch = ProcessInfo.processInfo.environment["BARSCOPE_BENCH_INDEX_BATCH"].flatMap { Int($0) } ?? 5_000
        var written = 0
        var lastMillion: (rows: Int, seconds: Double) = (0, 0)
        // The store's time alone: making the rows here is the benchmark's own work, not the index's.
        var writing = 0.0
        let began = ContinuousClock.now
        while written < total {
            let n = min(batch, total - written)
            let rows = (0..<n).map { i -> Sighting in
                let k = written + i
                let seen = start.addingTimeInterval(Double(k) / Double(total) * 30 * 86_400)
                return Sighting(
                    run: "run-\(k / 1000)", track: k % 1000, code: code(Int.random(in: 0..<codes, using: &random)),
                    symbology: "EAN-13", camera: "dock\(k % 8)", pipeline: "dock", node: "node1", firstSeen: seen,
                    lastSeen: seen.addingTimeInterval(1.5), frames: 45,
                    polygon: [Point(10, 10), Point(10, 60), Point(105, 60), Point(105, 10)],
                    recording: "/srv/rec/dock.mp4", offsetSeconds: 12.5)
            }
            let t = ContinuousClock.now
            try store.write(rows)
            let took = (ContinuousClock.now - t) / .seconds(1)
            writing += took
            written += n
            if written > total - 1_000_000 { lastMillion = (lastMillion.rows + n, lastMillion.seconds + took) }
        }
        let ingest = Double(total) / writing
        // As a recorder's writer does once nothing waits: the WAL written back (timed apart; the rows were durable
        // at each commit).
        let settling = ContinuousClock.now
        store.settle()
        let settled = (ContinuousClock.now - settling) / .seconds(1)
        let withMaking = Double(total) / ((ContinuousClock.now - began) / .seconds(1))

        func timed(_ runs: Int, _ query: (Int) -> SightingQuery) throws -> (p50: Double, p95: Double, found: Int) {
            var ms: [Double] = []
            var found = 0
            for i in 0..<runs {
                let t = ContinuousClock.now
                found += try store.search(query(i)).sightings.count
                ms.append((ContinuousClock.now - t) / .milliseconds(1))
            }
            ms.sort()
            return (ms[ms.count / 2], ms[min(ms.count - 1, ms.count * 95 / 100)], found)
        }
        let exact = try timed(500) { _ in SightingQuery(code: code(Int.random(in: 0..<codes, using: &random))) }
        let prefix = try timed(200) { _ in
            SightingQuery(code: String(code(Int.random(in: 0..<codes, using: &random)).prefix(6)), prefix: true)
        }
        let result: [String: Any] = [
            "engine": url == nil ? "sqlite" : "postgresql", "rows": total, "batch": batch,
            "ingest_rows_per_s": Int(ingest), "ingest_with_making_rows_per_s": Int(withMaking),
            "ingest_with_settling_rows_per_s": Int(Double(total) / (writing + settled)), "settle_s": settled,
            "ingest_last_million_rows_per_s": Int(Double(lastMillion.rows) / max(lastMillion.seconds, 1e-9)),
            "exact_ms": ["p50": exact.p50, "p95": exact.p95, "rows_found": exact.found],
            "prefix_100_ms": ["p50": prefix.p50, "p95": prefix.p95, "rows_found": prefix.found],
        ]
        let json = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
        print("index benchmark: " + String(decoding: json, as: UTF8.self))
        let out = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../bench-out")
        try? FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        try? json.write(to: out.appendingPathComponent("index.json"))
        #expect(prefix.found >= 100 * 190, "prefix searches found too few rows to be pages of 100")
    }
}
