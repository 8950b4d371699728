import Foundation

/// A temporary folder for one test process's media, removed when the process exits: each run of the suite used to
/// leave its folders of clips, recordings and images behind in /tmp.
public enum ScratchFolder {
    /// `TMPDIR/PREFIX-PID`, made now and removed at exit.
    public static func make(_ prefix: String) -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        made.add(url.path)
        return url
    }

    private final class Made: @unchecked Sendable {  // @unchecked: `paths` only under `lock`
        private let lock = NSLock()
        private var paths: [String] = []
        private var registered = false

        func add(_ path: String) {
            lock.lock()
            defer { lock.unlock() }
            paths.append(path)
            guard !registered else { return }
            registered = true
            atexit { ScratchFolder.made.removeAll() }
        }

        func removeAll() {
            lock.lock()
            let all = paths
            lock.unlock()
            for p in all { try? FileManager.default.removeItem(atPath: p) }
        }
    }
    private static let made = Made()
}
