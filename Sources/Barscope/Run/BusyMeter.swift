import Foundation

/// Busy time in one-second buckets (the last 8): the share of the workers' time spent scanning over the last few
/// whole seconds. Not thread-safe: its owner guards it.
final class BusyMeter: @unchecked Sendable {
    // Sendable: its owners (the pool, and each lane) use it under the pool's `condition` only.
    private var buckets = [Double](repeating: 0, count: 8)
    private var bucketSecond = [Int](repeating: -1, count: 8)
    private let origin = ContinuousClock.now
    /// Seconds busy since the start (a counter for /metrics).
    private(set) var total = 0.0

    private func second(_ t: ContinuousClock.Instant) -> (Int, Double) {
        let s = (t - origin).inSeconds
        return (Int(s), s)
    }

    /// A job ran from `start` to `end` (split over the seconds it spans).
    func add(_ start: ContinuousClock.Instant, _ end: ContinuousClock.Instant) {
        var (s, a) = second(start)
        let (e, b) = second(end)
        total += max(0, b - a)
        while s <= e {
            let upTo = s == e ? b : Double(s + 1)
            let i = s % buckets.count
            if bucketSecond[i] != s {
                bucketSecond[i] = s
                buckets[i] = 0
            }
            buckets[i] += max(0, upTo - a)
            a = upTo
            s += 1
        }
    }

    /// Over the last 5 whole seconds.
    func share(workers: Int) -> Double {
        let (now, _) = second(.now)
        var sum = 0.0
        for s in (now - 5)..<now where s >= 0 {
            let i = s % buckets.count
            if bucketSecond[i] == s { sum += buckets[i] }
        }
        return min(1, sum / (5 * Double(max(1, workers))))
    }
}
