import Foundation

/// Writes events as JSON Lines to a file or standard output on its own thread, one whole line at a time.
///
/// Producers (streaming and scanning threads) never wait for the reader: lines go into a bounded queue, and when a
/// slow consumer (a pipe nobody reads) lets it fill, new events are dropped and counted; the count is reported
/// in a `warning` line once the reader catches up, and by `dropped`.
public final class EventWriter: Sendable {
    private let fd: Int32
    private let ownsDescriptor: Bool
    private let capacity: Int
    // Sendable: the queue is guarded by the condition; the descriptor is written by the writer thread only.
    private let state: Locked<(lines: [String], closed: Bool, dropped: Int, reportedDrops: Int)> = Locked(
        ([], false, 0, 0))
    private let wake = NSCondition()
    private let finished = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - path: a file to create, or `-` for standard output.
    ///   - capacity: lines held for a slow reader before new ones are dropped.
    /// - Throws: ``BarscopeError/badInput`` when the file cannot be created.
    public init(path: String, capacity: Int = 4096) throws {
        if path == "-" {
            fd = STDOUT_FILENO
            ownsDescriptor = false
        } else {
            let d = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard d >= 0 else {
                throw BarscopeError.badInput("\(path): cannot write events (\(String(cString: strerror(errno))))")
            }
            fd = d
            ownsDescriptor = true
        }
        self.capacity = max(1, capacity)
        let thread = Thread { [self] in self.drain() }
        thread.name = "barscope-events"
        thread.start()
    }

    /// Events dropped because the reader fell behind.
    public var dropped: Int { state.withLock { $0.dropped } }

    public func write(_ event: Event) {
        let line = event.jsonLine + "\n"
        let queued = state.withLock { s -> Bool in
            guard !s.closed else { return false }
            guard s.lines.count < capacity else {
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

    /// Writes what is queued (waiting at most `timeout` seconds for a slow reader), then stops the writer.
    public func close(timeout: Double = 5) {
        state.withLock { $0.closed = true }
        wake.lock()
        wake.signal()
        wake.unlock()
        if finished.wait(timeout: .now() + timeout) == .timedOut {
            // The reader never caught up: what is still queued is lost as well, and counted with the drops.
            state.withLock {
                $0.dropped += $0.lines.count
                $0.lines.removeAll()
            }
        }
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
