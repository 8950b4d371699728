import Foundation
import Testing

/// What a child writes to a pipe, read on a thread of its own from the start: the child never blocks on a full pipe,
/// and no read blocks the test (a wait for a line is a `pollUntil` on `text` or `lines`, with its deadline). The one
/// reader of a child's output in the tests: the bytes, the text, and the whole lines as they come.
public final class PipeDrain: @unchecked Sendable {
    // Sendable: the fields below are guarded by `lock`.
    private let lock = NSLock()
    private var collected = Data()
    private var complete: [String] = []
    private var lineStart = 0
    private var ended = false

    public init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            while true {
                let chunk = handle.availableData
                lock.lock()
                defer { lock.unlock() }
                if chunk.isEmpty {
                    ended = true
                    return
                }
                collected.append(chunk)
                while let nl = collected[lineStart...].firstIndex(of: 10) {
                    complete.append(String(decoding: collected[lineStart..<nl], as: UTF8.self))
                    lineStart = nl + 1
                }
            }
        }
    }

    /// Every byte read so far.
    public var data: Data {
        lock.lock()
        defer { lock.unlock() }
        return collected
    }

    /// Everything read so far, as text.
    public var text: String { String(decoding: data, as: UTF8.self) }

    /// The whole lines read so far (a last line without its newline comes once the writer has ended: `waitForEnd`).
    public var lines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return complete
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
        pollUntil(seconds) { !lines.isEmpty || hasEnded }
        return !lines.isEmpty
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
