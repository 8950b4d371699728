import Foundation
import Synchronization

/// A run's counters: frames scanned, codes seen, the last frame's pts, frames drawn, and the latency from a frame's
/// arrival at the tee to its results being handed to the event stream (the last 8192 frames).
///
/// A frame takes no lock here: the counters are atomics, and the latencies wait in `pending` until 16 have come,
/// then go to the samples and the controller's histogram in one hold of each lock. `progress` may be read from an
/// event observer at any time (its latencies are at most 15 frames old).
///
/// Sendable: the counters are atomics and the samples behind a lock; `pending` is touched only by `scanned`, which
/// the scan stage calls from its delivery (under its sequencer's lock, one frame at a time), and by `flush()`
/// after the scanning threads have ended.
final class RunMetrics: @unchecked Sendable {
    private let framesScanned = Atomic<Int>(0)
    private let codesSeen = Atomic<Int>(0)
    /// The last frame's pts (`UInt64.max`: none).
    private let lastPts = Atomic<UInt64>(.max)
    private let samples = Locked((ms: [Double](), next: 0))
    private var pending: [Double] = []
    /// Frames drawn: the overlay counts them, without a lock.
    let drawn = Atomic<Int>(0)
    var codes: Int { codesSeen.load(ordering: .relaxed) }
    let started = Date()
    /// The controller's histogram of latencies, across its runs (nil: not kept).
    let histogram: LatencyHistogram?

    init(histogram: LatencyHistogram? = nil) { self.histogram = histogram }

    func scanned(ptsNs: UInt64?, codes: Int, latency: Duration?) {
        framesScanned.add(1, ordering: .relaxed)
        codesSeen.store(codes, ordering: .relaxed)
        lastPts.store(ptsNs ?? .max, ordering: .relaxed)
        guard let latency else { return }
        pending.append(Double(latency.components.seconds) * 1000 + Double(latency.components.attoseconds) / 1e15)
        if pending.count >= Self.batch { flush() }
    }

    /// Latencies kept this many at a time.
    static let batch = 16

    /// The latencies waiting go to the samples and the histogram (by `scanned`, and at the run's end).
    func flush() {
        guard !pending.isEmpty else { return }
        let batch = pending
        pending = []
        samples.withLock { s in
            for ms in batch {
                if s.ms.count < 8192 {
                    s.ms.append(ms)
                } else {
                    s.ms[s.next % 8192] = ms
                }
                s.next += 1
            }
        }
        histogram?.add(seconds: batch.map { $0 / 1000 })
    }

    var counts: (frames: Int, codes: Int, lastPts: UInt64?) {
        let pts = lastPts.load(ordering: .relaxed)
        return (framesScanned.load(ordering: .relaxed), codes, pts == .max ? nil : pts)
    }

    /// Median and 95th percentile of arrival-to-results time.
    func latencyPercentiles() -> (p50: Double, p95: Double)? {
        let samples = samples.withLock { s in s.ms.unshared }.sorted()
        guard !samples.isEmpty else { return nil }
        func pick(_ q: Double) -> Double { samples[min(samples.count - 1, Int(Double(samples.count) * q))] }
        return (pick(0.5), pick(0.95))
    }

    func progress(durationNs: UInt64?, skipped: Int) -> ScanProgress {
        let (frames, codes, pts) = counts
        var p = ScanProgress(
            frames: frames, codes: codes, positionNs: pts, durationNs: durationNs,
            seconds: Date().timeIntervalSince(started))
        p.framesDropped = skipped
        p.latencyMs = latencyPercentiles()
        return p
    }
}

/// How far a run has got, for a progress line.
public struct ScanProgress: Sendable {
    /// Frames scanned so far.
    public var frames: Int
    /// Codes seen (tracks started).
    public var codes: Int
    /// The stream time of the last frame scanned, and the stream's duration when it has one (files).
    public var positionNs: UInt64?
    public var durationNs: UInt64?
    /// Since the graph was built.
    public var seconds: Double
    /// Frames that reached the tee.
    public var framesIn = 0
    /// Frames a live source's scanner skipped to stay current.
    public var framesDropped = 0
    /// Frames waiting for a worker of the shared pool, and the share of the pool's time this stream used (last 5 s).
    public var scanWaiting = 0
    public var scanShare = 0.0
    /// Arrival at the tee to results, median and 95th percentile (ms).
    public var latencyMs: (p50: Double, p95: Double)? = nil
    /// Read cycles closed since the controller started, by result.
    public var cycles: [CycleResult.Outcome: Int] = [:]
    public var framesPerSecond: Double { seconds > 0 ? Double(frames) / seconds : 0 }
}

/// Latencies from the tee to results, counted into Prometheus's cumulative buckets (seconds), across a
/// controller's runs.
public final class LatencyHistogram: Sendable {
    public static let bounds: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
    private let state = Locked((buckets: [Int](repeating: 0, count: LatencyHistogram.bounds.count), count: 0, sum: 0.0))

    public init() {}

    func add(seconds: [Double]) {
        state.withLock { s in
            for x in seconds {
                for (i, b) in Self.bounds.enumerated() where x <= b { s.buckets[i] += 1 }
                s.count += 1
                s.sum += x
            }
        }
    }

    /// Cumulative counts per upper bound, the count and the sum.
    public var snapshot: (buckets: [Int], count: Int, sum: Double) {
        state.withLock { s in (s.buckets.unshared, s.count, s.sum) }
    }
}

/// Frames scanned and frames a live scanner skipped, over every run of a controller, failed runs included: the run
/// of the moment counts live, and its counts move to the ended runs' in one step when it ends (the totals never go
/// back).
public final class RunTotals: Sendable {
    private struct State {
        var frames = 0
        var dropped = 0
        var admitted = 0
        var current: (metrics: RunMetrics, ledger: FrameLedger)? = nil
    }
    private let state = Locked(State())

    public init() {}

    func begin(_ metrics: RunMetrics, _ ledger: FrameLedger) { state.withLock { $0.current = (metrics, ledger) } }

    func end() {
        state.withLock { s in
            guard let c = s.current else { return }
            s.frames += c.metrics.counts.frames
            let counts = c.ledger.frameCounts
            s.dropped += counts.skipped
            s.admitted += counts.admitted
            s.current = nil
        }
    }

    /// Frames scanned, dropped and in (reached the tee): in = scanned + dropped once every run has ended; while
    /// one runs, the difference is the frames it has in hand.
    public var counts: (frames: Int, dropped: Int, admitted: Int) {
        state.withLock { s in
            let now = s.current?.ledger.frameCounts
            return (
                s.frames + (s.current?.metrics.counts.frames ?? 0), s.dropped + (now?.skipped ?? 0),
                s.admitted + (now?.admitted ?? 0)
            )
        }
    }
}
