import Foundation

/// `barscope index`'s work: scans an archive's recordings into the index, several at once (each file a run of its
/// own whose frames go to the process's shared scanning pool), claiming each file through the index's `files`
/// table (``ArchiveLedger``) so that workers in other processes, on other machines, split the files with it.
///
/// A worker ends when every file it was given is done or bad: while another worker holds one, it waits for that
/// file to be done or for its lease to run out (then it scans the file itself).
public final class ArchiveIndexer: @unchecked Sendable {
    // Sendable: `held` and `tally` are behind their locks; the ledger is used under `ledgerLock` only.

    public struct Options: Sendable {
        /// The camera the rows name; nil: the part of the file's name before its timestamp, else its name.
        public var camera: String?
        /// The start of a file that says none (no datetime tag, no timestamp in its name).
        public var start: Date?
        /// Seconds a claim holds before another worker may take the file; renewed every third of it while scanning.
        public var lease: Double = 60
        /// Files scanned at once (their frames share the pool's threads).
        public var jobs = ScanPool.shared.workers
        public var node = ProcessInfo.processInfo.hostName

        public init() {}
    }

    /// What became of one file, as it happens (on the job's thread).
    public enum Report: Sendable {
        case started(String)
        case indexed(String, sightings: Int, start: ArchiveFile.StartSource)
        case bad(String, reason: String)
        /// Its lease ran out while it was scanned here, and another worker took it (its rows are that worker's).
        case lost(String)
    }

    public struct Tally: Sendable {
        public var indexed = 0
        public var sightings = 0
        public var bad = 0
        public var scanning = 0
    }

    private let ledger: ArchiveLedger
    private let ledgerLock = CountedLock()
    private let options: Options
    /// This worker's name in the table: node, process and a random part (two workers of one process differ).
    public let owner: String
    private let held = Locked<Set<String>>([])
    private let tally = Locked(Tally())
    private let stopped = Locked(false)

    public init(ledger: ArchiveLedger, options: Options) {
        self.ledger = ledger
        self.options = options
        owner = "\(options.node):\(getpid()):\(UUID().uuidString.prefix(8).lowercased())"
    }

    public var progress: Tally { tally.withLock { $0 } }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        ledgerLock.lock()
        defer { ledgerLock.unlock() }
        return try body()
    }

    /// Registers the files, scans every one no worker has done, and returns the states of all of them.
    /// - Throws: the index's error when it cannot be reached (files claimed meanwhile are taken again by a later
    ///   worker once their leases run out).
    public func run(_ files: [ArchiveFile], report: @escaping @Sendable (Report) -> Void) throws
        -> [String: (state: String, message: String?)]
    {
        try locked { try ledger.register(files) }
        let paths = files.map(\.path)
        let failure = Locked<Error?>(nil)
        let renewer = Thread { [self] in renewLoop() }
        renewer.name = "barscope-lease"
        renewer.start()
        defer { stopped.withLock { $0 = true } }
        let group = DispatchGroup()
        for n in 0..<max(1, min(options.jobs, files.count)) {
            group.enter()
            let t = Thread { [self] in
                defer { group.leave() }
                do { try work(paths, report) } catch {
                    failure.withLock { $0 = $0 ?? error }
                    stopped.withLock { $0 = true }
                }
            }
            t.name = "barscope-index-\(n)"
            t.start()
        }
        group.wait()
        if let e = failure.withLock({ $0 }) { throw e }
        return try locked { try ledger.states(of: paths) }
    }

    /// One job: claim, scan, complete, until nothing is left to claim.
    private func work(_ paths: [String], _ report: @Sendable (Report) -> Void) throws {
        while !stopped.withLock({ $0 }) {
            guard let file = try locked({ try ledger.claim(among: paths, owner: owner, lease: options.lease) }) else {
                let open = try locked { try ledger.states(of: paths) }.values.contains {
                    $0.state == "pending" || $0.state == "scanning"
                }
                guard open else { return }
                // Another worker holds a file: it finishes it, or its lease runs out and it is claimable here.
                Thread.sleep(forTimeInterval: min(1, options.lease / 4))
                continue
            }
            held.withLock { _ = $0.insert(file.path) }
            tally.withLock { $0.scanning += 1 }
            defer {
                held.withLock { _ = $0.remove(file.path) }
                tally.withLock { $0.scanning -= 1 }
            }
            report(.started(file.path))
            let start = file.start(given: options.start)
            let rows: [Sighting]
            do {
                rows = try scan(file, start: start?.date)
            } catch {
                try locked { try ledger.fail(file.path, owner: owner, reason: "\(error)") }
                tally.withLock { $0.bad += 1 }
                report(.bad(file.path, reason: "\(error)"))
                continue
            }
            if try locked({ try ledger.complete(file, owner: owner, rows: rows) }) {
                tally.withLock {
                    $0.indexed += 1
                    $0.sightings += rows.count
                }
                report(.indexed(file.path, sightings: rows.count, start: start?.source ?? .lastChange))
            } else {
                report(.lost(file.path))
            }
        }
    }

    /// Scans one file to its end; its sightings, their times from `start` (nil: its last change less its length).
    private func scan(_ file: ArchiveFile, start: Date?) throws -> [Sighting] {
        var spec = PipelineSpec()
        try spec.set("source", "input", file.path, origin: "the command line")
        // An archive is searched for every code in the frame, not only the viewfinder's.
        try spec.set("viewfinder", "enabled", "false", origin: "barscope index")
        let (configuration, _) = try spec.configuration()
        let collected = CollectingStore()
        let name = (file.path as NSString).lastPathComponent
        var context = SightingRecorder.Context(
            camera: options.camera ?? Self.camera(name), pipeline: "index", node: options.node, recording: nil,
            live: false, file: file.path, start: start)
        context.run = file.run
        context.fileIsRecording = true
        let recorder = SightingRecorder(open: { collected }, context: context)
        let controller = ScanController(name: "index", configuration: configuration) { recorder.take($0) }
        do {
            _ = try controller.run()
        } catch {
            recorder.close()
            throw error
        }
        recorder.close(timeout: 30)
        return collected.rows
    }

    /// A file's camera: the part of its name before its timestamp (`dock1` of `dock1-20261205-143000.mp4`), else
    /// its name without the extension.
    static func camera(_ name: String) -> String {
        if let before = ArchiveFile.nameStart(name)?.before, !before.isEmpty { return before }
        return (name as NSString).deletingPathExtension
    }

    /// Renews the leases of the files being scanned, every third of the lease.
    private func renewLoop() {
        var next = Date(timeIntervalSinceNow: options.lease / 3)
        while !stopped.withLock({ $0 }) {
            Thread.sleep(forTimeInterval: 0.05)
            guard Date() >= next else { continue }
            next = Date(timeIntervalSinceNow: options.lease / 3)
            for path in held.withLock({ $0 }) {
                // A failed renewal is not fatal here: the completion finds out whether the file is still ours.
                _ = try? locked { try ledger.renew(path, owner: owner, lease: options.lease) }
            }
        }
    }
}
