import Foundation
import Synchronization

/// Delivers a controller's events, in the order they were made, on a thread of its own, never under a lock of the
/// code that made them: producers (streaming and scanning threads) only append, which is bookkeeping. An observer
/// may therefore call back into the controller (`progress`, `stop`) without deadlock or stalling a worker.
///
/// Bounded, and `post` never waits (it is called under the producers' locks): a file's scanner branch waits for room
/// before it hands over its next frame (`waitForRoom`, holding no lock), so a file's scan slows to the pace of its
/// events' reader; a live source's events past `capacity` are dropped, counted, and said in a `warning` event.
///
/// Sendable: the queue and flags are guarded by `condition` (`backlog`, an atomic, copies its length); the thread
/// only reads `deliver`.
final class EventOutbox: @unchecked Sendable {
    private let condition = CountedCondition()
    private var queue: [Event] = []
    private var head = 0
    /// `queue.count - head` as last written under the lock: `waitForRoom` looks at it first, without the lock.
    private let backlog = Atomic<Int>(0)
    private var closed = false
    private var delivering = false
    private let capacity: Int
    /// Whether the producer waits for room (files), or events past `capacity` are dropped (live).
    private let waits: Bool
    /// Events dropped because the observer fell behind (live only), and how many of them a warning has told.
    private(set) var dropped = 0
    private var reported = 0
    private let deliver: @Sendable (Event) -> Void
    /// The delivery thread, to tell a call made from an observer. Weak: the thread's block holds this outbox, and
    /// Foundation keeps a Thread's block for the Thread's life, so a strong reference here was a cycle that kept every
    /// outbox and its events after close (LeakSanitizer). The running thread keeps itself; gone, nobody is it.
    nonisolated(unsafe) private weak var thread: Thread? = nil

    init(capacity: Int = 1024, name: String, waits: Bool = true, deliver: @escaping @Sendable (Event) -> Void) {
        self.capacity = max(1, capacity)
        self.waits = waits
        self.deliver = deliver
        let t = Thread { [self] in run() }
        t.name = "barscope-events-\(name)"
        thread = t
        t.start()
    }

    /// Whether the caller is this outbox's delivery thread (an observer calling back).
    var isDeliveryThread: Bool { Thread.current === thread }

    /// Queues an event, never waiting (bookkeeping only: callers hold their own locks).
    func post(_ event: Event) {
        condition.lock()
        defer { condition.unlock() }
        guard !closed else { return }
        if !waits && queue.count - head >= capacity {
            dropped += 1
            return
        }
        queue.append(event)
        backlog.store(queue.count - head, ordering: .relaxed)
        condition.broadcast()
    }

    /// Waits, holding no lock of the caller's, while the observer is `capacity` events behind (a file's scanner
    /// branch before each frame). Returns at once for a live source, on the delivery thread, or once closed.
    func waitForRoom() {
        guard waits, backlog.load(ordering: .relaxed) >= capacity, !isDeliveryThread else { return }
        condition.lock()
        while queue.count - head >= capacity && !closed { condition.wait() }
        condition.unlock()
    }

    /// Delivers what is queued, then ends the thread. Returns when the last event has been delivered (at once when
    /// called from the delivery thread: it would wait for itself).
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        if !isDeliveryThread {
            while head < queue.count || delivering { condition.wait() }
        }
        condition.unlock()
    }

    /// Returns when everything queued so far has been delivered (at once on the delivery thread).
    func flush() {
        condition.lock()
        defer { condition.unlock() }
        guard !isDeliveryThread else { return }
        while head < queue.count || delivering { condition.wait() }
    }

    private func run() {
        condition.lock()
        while true {
            while head == queue.count && !closed { condition.wait() }
            if head == queue.count && closed { break }
            var batch = Array(queue[head...])
            head = queue.count
            backlog.store(0, ordering: .relaxed)
            if dropped > reported {
                batch.append(
                    .warning(message: "events: \(dropped - reported) dropped, the observer fell behind", source: nil))
                reported = dropped
            }
            if head > 4096 {
                queue.removeFirst(head)
                head = 0
            }
            delivering = true
            condition.broadcast()
            condition.unlock()
            for e in batch { deliver(e) }
            condition.lock()
            delivering = false
            condition.broadcast()
        }
        condition.unlock()
    }
}
