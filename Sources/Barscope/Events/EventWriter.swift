import Foundation
import Synchronization

/// Writes events as JSON Lines to a file or standard output, from any thread, one whole line at a time.
public final class EventWriter: Sendable {
    private let fd: Int32
    private let ownsDescriptor: Bool
    // Sendable: writes are serialized by this lock so lines never interleave.
    private let lock = Mutex(())

    /// - Parameter path: a file to create, or `-` for standard output.
    /// - Throws: ``BarscopeError/badInput`` when the file cannot be created.
    public init(path: String) throws {
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
    }

    public func write(_ event: Event) {
        var line = Array((event.jsonLine + "\n").utf8)
        lock.withLock { _ in
            line.withUnsafeMutableBytes { buf in
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

    deinit { if ownsDescriptor { close(fd) } }
}
