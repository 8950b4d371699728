import Foundation

/// `--keep-days N`: sightings last seen more than N days ago are deleted from the index, and with them the recordings
/// and snapshots they named (when no newer sighting names them), the archive's files indexed then, and what else the
/// caller's folders hold of that age. A file is deleted only when its last change is older than the cutoff too, and
/// never while a process of this machine has it open for writing (an instance's recording in progress): such a
/// recording keeps its sightings too, and both go at the first sweep after it is closed.
public enum Retention {
    public struct Result: Sendable, Equatable {
        public var rows = 0
        public var deleted: [String] = []
        /// Old enough, but open for writing: left for a later sweep (their sightings too).
        public var beingWritten: [String] = []
    }

    /// - Parameters:
    ///   - days: what is kept; older goes.
    ///   - also: more files that may go (the service's instances' snapshots and recording segments), by the same
    ///     rule of age and of writing.
    public static func sweep(
        _ ledger: ArchiveLedger, keepDays days: Double, also: [String] = [], now: Date = Date()
    ) throws -> Result {
        let cutoff = now.addingTimeInterval(-days * 86_400)
        let open = beingWritten()
        let expired = try ledger.expire(before: cutoff, sparing: Array(open))
        let named = expired.files
        var result = Result(rows: expired.rows, beingWritten: expired.spared)
        var forgotten: [String] = []
        for path in Array(Set(named + also)).sorted() {
            guard let modified = modified(path), modified < cutoff else { continue }
            if open.contains(path) {
                if !result.beingWritten.contains(path) { result.beingWritten.append(path) }
                continue
            }
            if unlink(path) == 0 || errno == ENOENT {
                result.deleted.append(path)
                forgotten.append(path)
            }
        }
        try ledger.forget(forgotten)
        return result
    }

    /// The files of `folder` (not below it) whose name starts with `prefix` and ends with `suffix`: a recording's
    /// segments and sessions (`dock.mp4`, `dock-00003.mp4`, `dock-1.mp4`), or a snapshots folder's pictures.
    public static func files(in folder: String, prefix: String = "", suffix: String = "") -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasPrefix(prefix) && $0.hasSuffix(suffix) }.map {
            (folder as NSString).appendingPathComponent($0)
        }
    }

    static func modified(_ path: String) -> Date? {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Date(timeIntervalSince1970: Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9)
    }

    /// The files the processes of this machine (those whose descriptors we may read: our user's) have open for
    /// writing, from /proc: each descriptor's target, and its access mode in fdinfo's `flags`.
    static func beingWritten() -> Set<String> {
        var paths = Set<String>()
        let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for pid in processes where pid.allSatisfy(\.isNumber) {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
            for fd in fds {
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"),
                    target.hasPrefix("/"),
                    let info = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8),
                    let line = info.split(separator: "\n").first(where: { $0.hasPrefix("flags:") }),
                    let flags = Int(line.dropFirst("flags:".count).trimmingCharacters(in: .whitespaces), radix: 8)
                else { continue }
                if flags & Int(O_ACCMODE) != Int(O_RDONLY) { paths.insert(target) }
            }
        }
        return paths
    }
}
