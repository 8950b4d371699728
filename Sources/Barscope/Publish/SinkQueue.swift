import Foundation

/// What every sink shares: events given by any thread wait in memory until the sink's thread writes them to the
/// spool (counting what the disk refused and what a full spool dropped, and saying so once per loss).
final class SinkQueue: @unchecked Sendable {
    // Sendable: `spool` and `lastDropped` are the sink's thread's; the inbox and the counters are behind locks.
    let spool: Spool
    let counters = Locked(PublishCounters())
    private let inbox = Locked<[(instance: String, seq: Int, payload: String)]>([])
    private let wake = CountedCondition()
    /// Under `wake`: a poke not yet waited for.
    private var poked = false
    private let stopRequested = Locked(false)
    private var lastDropped = 0
    private let target: PublishTarget
    private let report: @Sendable (Event) -> Void

    init(spool: Spool, target: PublishTarget, report: @escaping @Sendable (Event) -> Void) {
        self.spool = spool
        self.target = target
        self.report = report
    }

    /// Any thread.
    func enqueue(instance: String, seq: Int, payload: String) {
        inbox.withLock { $0.append((instance, seq, payload)) }
        poke()
    }

    func poke() {
        wake.lock()
        poked = true
        wake.signal()
        wake.unlock()
    }

    /// Waits for an event or a poke, at most `seconds` (the sink's thread, with nothing else to do). A poke that
    /// came since the last wait ends it at once: none is lost between a look and the wait.
    func idle(_ seconds: Double) {
        let until = Date(timeIntervalSinceNow: seconds)
        wake.lock()
        while !poked && wake.wait(until: until) {}
        poked = false
        wake.unlock()
    }

    func requestStop() {
        stopRequested.withLock { $0 = true }
        poke()
    }

    var stopping: Bool { stopRequested.withLock { $0 } }

    /// The sink's thread: what waits in memory goes to the spool.
    func drain() {
        let items = inbox.withLock { i -> [(instance: String, seq: Int, payload: String)] in
            defer { i.removeAll() }
            return i
        }
        for item in items {
            if spool.append(instance: item.instance, seq: item.seq, payload: item.payload) {
                counters.withLock { $0.spooled += 1 }
            } else {
                counters.withLock { $0.dropped["disk", default: 0] += 1 }
            }
        }
        if spool.dropped > lastDropped {
            let n = spool.dropped - lastDropped
            lastDropped = spool.dropped
            counters.withLock { $0.dropped["spool-full", default: 0] += n }
            report(
                .warning(
                    message: "\(target): the spool is full (\(spool.maxBytes >> 20) MB): the \(n) oldest events "
                        + "were dropped", source: "publish"))
        }
        let depth = spool.depth + inbox.withLock { $0.count }
        counters.withLock { $0.depth = depth }
    }
}
