import Foundation

/// Writes events as JSON Lines to a file or standard output on its own thread, one whole line at a time.
///
/// Lines go into a bounded queue. When a slow reader lets it fill, `whenFull` decides: `.wait` (files, and any
/// source that is not live) makes the producer wait, so nothing is lost and the scan slows to the reader's pace;
/// `.drop` (a live source, whose video must not wait) drops new events and counts them, reported in a `warning`
/// line once the reader catches up, and by `dropped`.
///
/// One condition guards the queue: a producer takes it once a line (waiting on it for room, with `.wait`), and the
/// writer thread once a batch (waiting on it for lines).
///
/// Sendable: the queue is guarded by `condition`; the descriptor is written by the writer thread only.
public final class EventWriter: @unchecked Sendable {
    public enum WhenFull: Sendable {
        case wait
        case drop
    }
    private let fd: Int32
    private let ownsDescriptor: Bool
    private let capacity: Int
    private let whenFull: WhenFull
    private struct State {
        var lines: [String] = []
        var closed = false
        var abandoned = false
        var dropped = 0
        var reportedDrops = 0
    }
    private var state = State()
    private let condition = CountedCondition()
    private let finished = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - path: a file to create, or `-` for standard output.
    ///   - capacity: lines held for a slow reader before new ones are dropped.
    ///   - append: add to an existing file (a service instance started again keeps what it wrote before).
    /// - Throws: ``BarscopeError/badInput`` when the file cannot be created.
    public init(path: String, capacity: Int = 4096, whenFull: WhenFull = .wait, append: Bool = false) throws {
        if path == "-" {
            fd = STDOUT_FILENO
            ownsDescriptor = false
        } else {
            let d = open(path, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC) | O_CLOEXEC, 0o644)
            guard d >= 0 else {
                throw BarscopeError.badInput("\(path): cannot write events (\(String(cString: strerror(errno))))")
            }
            fd = d
            ownsDescriptor = true
        }
        self.capacity = max(1, capacity)
        self.whenFull = whenFull
        let thread = Thread { [self] in self.drain() }
        thread.name = "barscope-events"
        thread.start()
    }

    /// Events dropped because the reader fell behind.
    public var dropped: Int { condition.withLock { state.dropped } }

    public func write(_ event: Event) { write(line: event.jsonLine) }

    /// One event's JSON line as it was stamped (`--publish` adds `id` and `seq`).
    public func write(line text: String) {
        let line = text + "\n"
        condition.lock()
        defer { condition.unlock() }
        while whenFull == .wait, state.lines.count >= capacity, !state.closed { condition.wait() }
        guard !state.closed else {
            if state.abandoned { state.dropped += 1 }
            return
        }
        guard state.lines.count < capacity || whenFull == .wait else {
            state.dropped += 1
            return
        }
        state.lines.append(line)
        condition.broadcast()
    }

    /// Writes everything queued, then stops the writer. With `.drop`, a reader that does not catch up within
    /// `timeout` seconds loses what is still queued (counted with the drops); with `.wait`, nothing is given up
    /// unless `abandon()` is called.
    public func close(timeout: Double = 5) {
        condition.withLock {
            state.closed = true
            condition.broadcast()
        }
        let limit: DispatchTime = whenFull == .wait ? .distantFuture : .now() + timeout
        if finished.wait(timeout: limit) == .timedOut {
            // The reader never caught up: what is still queued is lost as well, and counted with the drops.
            condition.withLock {
                state.dropped += state.lines.count
                state.lines.removeAll()
            }
        }
    }

    /// Gives up on a reader that does not read (a second Ctrl-C): what is queued and what comes after is dropped
    /// and counted, and nobody waits for the reader any more.
    public func abandon() {
        condition.withLock {
            state.closed = true
            state.abandoned = true
            state.dropped += state.lines.count
            state.lines.removeAll()
            condition.broadcast()
        }
        finished.signal()
    }

    private func drain() {
        while true {
            condition.lock()
            while state.lines.isEmpty && !state.closed { condition.wait() }
            let batch = state.lines
            state.lines.removeAll(keepingCapacity: true)
            var note: String? = nil
            if state.dropped > state.reportedDrops {
                note =
                    Event.warning(
                        message: "events: \(state.dropped - state.reportedDrops) dropped, the reader fell behind",
                        source: nil
                    ).jsonLine + "\n"
                state.reportedDrops = state.dropped
            }
            let closed = state.closed
            // Room again for producers waiting (`.wait`).
            if !batch.isEmpty { condition.broadcast() }
            condition.unlock()
            for line in batch + (note.map { [$0] } ?? []) { writeFully(line) }
            if closed && batch.isEmpty { break }
        }
        if ownsDescriptor { Foundation.close(fd) }
        finished.signal()
    }

    private func writeFully(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { buf in
            var off = 0
            while off < buf.count {
                let n = Foundation.write(fd, buf.baseAddress! + off, buf.count - off)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }  // a closed pipe: events are lost, video goes on
                off += n
            }
        }
    }
}
