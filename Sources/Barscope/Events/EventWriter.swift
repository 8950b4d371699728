import Foundation

/// Writes events as JSON Lines to a file or standard output on its own thread, one whole line at a time.
///
/// Lines go into a bounded queue. When a slow reader lets it fill, `whenFull` decides: `.wait` (files, and any
/// source that is not live) makes the producer wait, so nothing is lost and the scan slows to the reader's pace;
/// `.drop` (a live source, whose video must not wait) drops new events and counts them, reported in a `warning`
/// line once the reader catches up, and by `dropped`.
public final class EventWriter: Sendable {
    public enum WhenFull: Sendable {
        case wait
        case drop
    }
    private let fd: Int32
    private let ownsDescriptor: Bool
    private let capacity: Int
    private let whenFull: WhenFull
    // Sendable: the queue is guarded by the condition; the descriptor is written by the writer thread only.
    private struct State {
        var lines: [String] = []
        var closed = false
        var abandoned = false
        var dropped = 0
        var reportedDrops = 0
    }
    private let state = Locked(State())
    private let wake = NSCondition()
    /// Producers waiting for room (`.wait`).
    private let space = NSCondition()
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
    public var dropped: Int { state.withLock { $0.dropped } }

    public func write(_ event: Event) { write(line: event.jsonLine) }

    /// One event's JSON line as it was stamped (`--publish` adds `id` and `seq`).
    public func write(line text: String) {
        let line = text + "\n"
        space.lock()
        while whenFull == .wait, state.withLock({ $0.lines.count >= capacity && !$0.closed }) { space.wait() }
        space.unlock()
        let queued = state.withLock { s -> Bool in
            guard !s.closed else {
                if s.abandoned { s.dropped += 1 }
                return false
            }
            guard s.lines.count < capacity || whenFull == .wait else {
                s.dropped += 1
                return false
            }
            s.lines.append(line)
            return true
        }
        if queued {
            wake.lock()
            wake.signal()
            wake.unlock()
        }
    }

    /// Writes everything queued, then stops the writer. With `.drop`, a reader that does not catch up within
    /// `timeout` seconds loses what is still queued (counted with the drops); with `.wait`, nothing is given up
    /// unless `abandon()` is called.
    public func close(timeout: Double = 5) {
        state.withLock { $0.closed = true }
        wake.lock()
        wake.signal()
        wake.unlock()
        space.lock()
        space.broadcast()
        space.unlock()
        let limit: DispatchTime = whenFull == .wait ? .distantFuture : .now() + timeout
        if finished.wait(timeout: limit) == .timedOut {
            // The reader never caught up: what is still queued is lost as well, and counted with the drops.
            state.withLock {
                $0.dropped += $0.lines.count
                $0.lines.removeAll()
            }
        }
    }

    /// Gives up on a reader that does not read (a second Ctrl-C): what is queued and what comes after is dropped
    /// and counted, and nobody waits for the reader any more.
    public func abandon() {
        state.withLock {
            $0.closed = true
            $0.abandoned = true
            $0.dropped += $0.lines.count
            $0.lines.removeAll()
        }
        space.lock()
        space.broadcast()
        space.unlock()
        finished.signal()
    }

    private func drain() {
        while true {
            let (batch, closed, note) = state.withLock { s -> ([String], Bool, String?) in
                let b = s.lines
                s.lines.removeAll(keepingCapacity: true)
                var note: String? = nil
                if s.dropped > s.reportedDrops {
                    note =
                        Event.warning(
                            message: "events: \(s.dropped - s.reportedDrops) dropped, the reader fell behind",
                            source: nil
                        ).jsonLine + "\n"
                    s.reportedDrops = s.dropped
                }
                return (b, s.closed, note)
            }
            if !batch.isEmpty {
                // Room again for producers waiting (`.wait`); taken after the state's lock, never inside it.
                space.lock()
                space.broadcast()
                space.unlock()
            }
            for line in batch + (note.map { [$0] } ?? []) { writeFully(line) }
            if closed && batch.isEmpty { break }
            if batch.isEmpty {
                wake.lock()
                if state.withLock({ $0.lines.isEmpty && !$0.closed }) {
                    _ = wake.wait(until: Date(timeIntervalSinceNow: 0.2))
                }
                wake.unlock()
            }
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
