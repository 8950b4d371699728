import Foundation
import Testing

/// What a child writes to a pipe, read on a thread of its own from the start: the child never blocks on a full pipe,
/// and no read blocks the test (a wait for a line is a `pollUntil` on `text`, with its deadline).
public final class PipeDrain: @unchecked Sendable {
    // Sendable: `collected` is guarded by `lock`.
    private let lock = NSLock()
    private var collected = ""
    private var ended = false

    public init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            while true {
                let chunk = handle.availableData
                lock.lock()
                if chunk.isEmpty {
                    ended = true
                    lock.unlock()
                    return
                }
                collected += String(decoding: chunk, as: UTF8.self)
                lock.unlock()
            }
        }
    }

    /// Everything read so far.
    public var text: String {
        lock.lock()
        defer { lock.unlock() }
        return collected
    }

    /// Whether the writer has closed its end.
    public var hasEnded: Bool {
        lock.lock()
        defer { lock.unlock() }
        return ended
    }

    /// Waits up to `seconds` for a whole first line (or the end); says whether a line came.
    @discardableResult
    public func waitForLine(_ seconds: Double) -> Bool {
        pollUntil(seconds) { text.contains("\n") || hasEnded }
        return text.contains("\n")
    }
}

/// Waits up to `seconds` for `process` to end. Past them it is killed (SIGKILL) and the calling test records an
/// issue naming `what`: a child that hangs fails its test instead of holding the run. Says whether it ended in time
/// (`terminationStatus` may then be read).
@discardableResult
public func waitForExit(
    _ process: Process, _ seconds: Double, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
) -> Bool {
    if pollUntil(seconds, { !process.isRunning }) { return true }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    Issue.record("\(what): still running after \(seconds) s, killed", sourceLocation: sourceLocation)
    return false
}
