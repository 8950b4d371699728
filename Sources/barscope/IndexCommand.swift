import Barscope
import Foundation

/// `barscope index PATH…`: an archive's recordings scanned into the sightings index, several at once, resumable, and
/// split between workers that share a PostgreSQL index.
///
/// Exit codes: 0 every file indexed (now or before), 1 some files bad (each named on a line of its own, skipped),
/// 2 bad options or an index that cannot be opened or reached.
enum IndexCommand {
    static func main(_ tokens: [String]) throws -> Int32 {
        var options = ArchiveIndexer.Options()
        var index: String? = nil
        var quiet = false
        var help = false
        var keepDays: Double? = nil
        var args = Arguments(command: "index", tokens)
        try args.parse { option, next in
            switch option {
            case "--index": index = try next()
            case "--camera": options.camera = try next()
            case "--start":
                let text = try next()
                do { options.start = try TimeArgument.parse(text) } catch let e as BarscopeError {
                    throw UsageError("--start: \(e.description)")
                }
            case "--lease":
                let text = try next()
                guard let s = Double(text), s >= 1, s <= 86_400 else {
                    throw UsageError("--lease '\(text)': expected seconds between 1 and 86400")
                }
                options.lease = s
            case "--jobs": options.jobs = try parseInt(try next(), option: option, min: 1)
            case "--keep-days": keepDays = try RetentionSweeps.days(try next())
            case "--quiet", "-q": quiet = true
            case "--help", "-h": help = true
            default: return false
            }
            return true
        }
        if help {
            print(Help.index)
            return 0
        }
        guard !args.positionals.isEmpty || keepDays != nil else {
            throw UsageError("index needs the recordings (files or folders), or --keep-days")
        }
        let location = try index ?? ServeCommand.defaultIndex()
        var (files, missing) = collect(args.positionals)
        // An SQLite index kept in the archive's folder is not one of its recordings.
        if let own = ArchiveFile(onDisk: location)?.path {
            files.removeAll { f in ["", "-wal", "-shm", "-journal"].contains { f.path == own + $0 } }
        }
        let ledger = try SightingIndexes.openLedger(location)
        defer { ledger.close() }
        // Retention first: what it deletes is not scanned.
        if let keepDays {
            let swept = try Retention.sweep(ledger, keepDays: keepDays)
            files.removeAll { swept.deleted.contains($0.path) }
            if !quiet {
                FileHandle.standardError.write(Data((RetentionSweeps.describe(swept, days: keepDays) + "\n").utf8))
            }
            if args.positionals.isEmpty { return 0 }
        }
        let indexer = ArchiveIndexer(ledger: ledger, options: options)
        let progress = quiet || isatty(STDERR_FILENO) != 1 ? nil : FilesProgress(total: files.count, indexer: indexer)
        @Sendable func say(_ line: String) {
            if let progress { progress.note(line) } else { FileHandle.standardError.write(Data((line + "\n").utf8)) }
        }
        for path in missing { say("barscope: \(path): no such file (skipped)") }
        let named = Locked<Set<String>>([])
        let quietly = quiet
        let states: [String: (state: String, message: String?)]
        do {
            states = try indexer.run(files) { report in
                if case .bad(let path, let reason) = report {
                    named.withLock { _ = $0.insert(path) }
                    say("barscope: \(Self.naming(path, reason)) (skipped)")
                }
                if case .lost(let path) = report, !quietly {
                    say("barscope: \(path): its lease ran out and another worker indexed it")
                }
            }
        } catch {
            progress?.end()
            throw error
        }
        progress?.end()
        // Files found bad before (by an earlier run, or another worker) are named too: the archive still holds them.
        let bad = states.filter { $0.value.state == "bad" }
        for (path, s) in bad.sorted(by: { $0.key < $1.key }) where !named.withLock({ $0.contains(path) }) {
            say("barscope: \(Self.naming(path, s.message ?? "bad")) (skipped; found before)")
        }
        if !quiet {
            let t = indexer.progress
            let before = states.values.filter { $0.state == "done" }.count - t.indexed
            var line = "barscope: \(files.count + missing.count) files: \(t.indexed) indexed"
            line += " (\(t.sightings) sightings)"
            if before > 0 { line += ", \(before) indexed before or by another worker" }
            if !bad.isEmpty || !missing.isEmpty { line += ", \(bad.count + missing.count) bad" }
            line += "; index \(SightingIndexes.shown(location))"
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
        return bad.isEmpty && missing.isEmpty ? 0 : 1
    }

    /// A reason that names its file already is not prefixed with it again.
    static func naming(_ path: String, _ reason: String) -> String {
        reason.hasPrefix(path) ? reason : "\(path): \(reason)"
    }

    /// The files named, and those in the folders named (recursively, hidden ones left out), in order; and the paths
    /// that are neither.
    static func collect(_ paths: [String]) -> (files: [ArchiveFile], missing: [String]) {
        var files: [ArchiveFile] = []
        var missing: [String] = []
        var seen = Set<String>()
        for path in paths {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
                missing.append(path)
                continue
            }
            var names = [path]
            if isFolder.boolValue {
                let inside = FileManager.default.enumerator(atPath: path)?.compactMap { $0 as? String } ?? []
                names = inside.filter { !$0.split(separator: "/").contains { $0.hasPrefix(".") } }.sorted()
                    .map { (path as NSString).appendingPathComponent($0) }
            }
            for name in names {
                guard let f = ArchiveFile(onDisk: name) else { continue }
                if seen.insert(f.path).inserted { files.append(f) }
            }
        }
        return (files, missing)
    }
}

/// `barscope: [########----------------]  7/20 files  2 scanning  31 sightings  1 bad`, redrawn on the terminal.
final class FilesProgress: @unchecked Sendable {
    // Sendable: `running` and the writes to the terminal are under `lock`.
    private let lock = NSLock()
    private var running = true
    private let finished = DispatchSemaphore(value: 0)
    private let total: Int
    private let indexer: ArchiveIndexer

    init(total: Int, indexer: ArchiveIndexer) {
        self.total = total
        self.indexer = indexer
        let t = Thread { [self] in loop() }
        t.name = "barscope-progress"
        t.start()
    }

    func note(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + text + "\n").utf8))
    }

    func end() {
        lock.withLock { running = false }
        finished.wait()
        lock.withLock { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }

    static func describe(_ t: ArchiveIndexer.Tally, total: Int, width: Int = 24) -> String {
        let done = t.indexed + t.bad
        let filled = total == 0 ? width : min(width, done * width / total)
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        var line = "barscope: [\(bar)]  \(done)/\(total) files  \(t.scanning) scanning  \(t.sightings) sightings"
        if t.bad > 0 { line += "  \(t.bad) bad" }
        return line
    }

    private func loop() {
        defer { finished.signal() }
        while lock.withLock({ running }) {
            let text = Self.describe(indexer.progress, total: total)
            lock.withLock { if running { FileHandle.standardError.write(Data(("\r\u{1B}[K" + text).utf8)) } }
            Thread.sleep(forTimeInterval: 0.25)
        }
    }
}
