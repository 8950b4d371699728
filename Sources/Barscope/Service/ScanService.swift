import CBarscope
import Foundation
import Synchronization

/// The instances `barscope serve` runs: created from named pipelines with `SECTION.KEY` overrides, each under its
/// own controller, so that one instance's failure never touches another; the ones asked for are written to the
/// state folder (atomically) and started again, with the same ids, when the service starts again.
///
/// Sendable: the registry is behind a lock; each instance is thread-safe.
public final class ScanService: @unchecked Sendable {
    public enum Failure: Error, Equatable {
        /// 404: no such pipeline or instance.
        case notFound(String)
        /// 400: a bad name, key or value (the command line's own message).
        case badRequest(String)
        /// 504: it did not stop in time (it goes on stopping, and stays listed).
        case timedOut(String)
    }

    let stateFile: String
    private let registry = Locked<[ServiceInstance]>([])
    /// Called when an instance has new events (any thread): the streams watching it catch up.
    let onEvents: Locked<(@Sendable (ServiceInstance) -> Void)?> = Locked(nil)

    /// - Parameter stateFolder: created if missing; holds `instances.json`.
    /// - Throws: ``BarscopeError/badInput`` when the folder cannot be made or written.
    /// Brokers every instance's events go to (`serve --publish`), set before the first instance.
    public let publisher = Locked<Publisher?>(nil)
    /// The sightings index every instance writes to (`serve --index`; the state folder's SQLite file by default), and
    /// this node's name in it; set before the first instance.
    public let index = Locked<(location: String, node: String)?>(nil)
    /// The store searches read, opened at the first (and again after a failure).
    private let searchStore = Locked<SightingStore?>(nil)

    public init(stateFolder: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: stateFolder, withIntermediateDirectories: true)
        } catch {
            throw BarscopeError.badInput("\(stateFolder): cannot make the state folder (\(error.localizedDescription))")
        }
        guard FileManager.default.isWritableFile(atPath: stateFolder) else {
            throw BarscopeError.badInput("\(stateFolder): the state folder is not writable")
        }
        stateFile = (stateFolder as NSString).appendingPathComponent("instances.json")
    }

    /// Names and ids in paths: letters, digits, `.`, `_`, `-`, at most 64, never `.` or `..`.
    public static func isValidName(_ s: String) -> Bool {
        !s.isEmpty && s.count <= 64 && s != "." && s != ".."
            && s.unicodeScalars.allSatisfy {
                CharacterSet.alphanumerics.contains($0) && $0.isASCII || "._-".unicodeScalars.contains($0)
            }
    }

    /// A copy of the list in a buffer of its own, made under the lock. Handing out the registry's own buffer let a
    /// reader iterate it while a delete removed from it in place: Swift's copy-on-write orders the two only through
    /// the buffer's reference count, which ThreadSanitizer cannot see (it reported persist() against delete()).
    public var instances: [ServiceInstance] { registry.withLock { $0.map { $0 } } }

    public func instance(_ id: String) -> ServiceInstance? { registry.withLock { r in r.first { $0.id == id } } }

    /// The named pipelines the service can run.
    public func pipelines() -> [(name: String, description: String?)] {
        PipelineSpec.all().map { ($0.name, $0.description) }
    }

    /// Starts an instance of a named pipeline.
    /// - Parameters:
    ///   - overrides: `SECTION.KEY` → value, as `--set` takes them.
    ///   - id: given when restoring (the same id as before); otherwise a new one.
    /// - Throws: ``Failure`` (404 unknown pipeline; 400 a bad key or value, with the command line's message).
    @discardableResult
    public func create(pipeline: String, overrides: [(String, String)], id: String? = nil) throws -> ServiceInstance {
        guard Self.isValidName(pipeline) else {
            throw Failure.badRequest("pipeline name '\(pipeline)': letters, digits, '.', '_', '-'")
        }
        guard let file = PipelineSpec.find(pipeline) else { throw Failure.notFound("no pipeline named '\(pipeline)'") }
        var configuration: RunConfiguration
        var eventsPath = "-"
        do {
            var spec = try PipelineSpec(file: file)
            for (key, value) in overrides {
                guard key.split(separator: ".").count >= 2, !key.contains("=") else {
                    throw BarscopeError.badValue("'\(key)': expected SECTION.KEY")
                }
                try spec.set(assignment: "\(key)=\(value)")
            }
            (configuration, eventsPath) = try spec.configuration()
            try Self.checkServable(spec, configuration)
        } catch let e as BarscopeError {
            throw Failure.badRequest(e.description)
        }
        // Recordings continue in new files: what an earlier run (or an earlier life of the service) wrote stays.
        if var r = configuration.recording, r.segmentSeconds == nil, FileManager.default.fileExists(atPath: r.path) {
            var n = 1
            while FileManager.default.fileExists(atPath: r.session(n).path) { n += 1 }
            r = r.session(n)
            configuration.recording = r
        }
        // `[events] path`: the instance's events also go to that file, added to (a restored instance keeps what it
        // wrote). The service has no standard output of events, so `-` means none.
        var eventFile: EventWriter? = nil
        if eventsPath != "-" {
            do {
                eventFile = try EventWriter(
                    path: eventsPath, whenFull: configuration.input.isLive ? .drop : .wait, append: true)
            } catch let e as BarscopeError {
                throw Failure.badRequest("[events] path: \(e.description)")
            }
        }
        let newID = id ?? "\(pipeline.prefix(40))-\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
        // Its sightings: the store opened by the recorder's own thread (a database that is away is waited for).
        // The instance the recorder's notes go to, once it exists: behind a lock, since the recorder's thread may
        // note something (rows taken from the spool, the index away) while the instance is still being made.
        final class Reporter: Sendable {
            struct Weak { weak var instance: ServiceInstance? }
            let held = Locked(Weak())
            var instance: ServiceInstance? { held.withLock { $0.instance } }
        }
        let reporter = Reporter()
        let recorder = index.load().map { index in
            SightingRecorder(
                open: { try SightingIndexes.open(index.location) },
                context: SightingRecorder.Context(
                    camera: newID, pipeline: pipeline, node: index.node, recording: configuration.recording,
                    live: configuration.input.isLive, file: nil,
                    spool: SightingIndexes.spoolFolder(
                        in: (stateFile as NSString).deletingLastPathComponent, for: index.location),
                    frameSeconds: RunConfiguration.frameSeconds(configuration.input))
            ) { note in reporter.instance?.controller.report(.warning(message: note, source: "index")) }
        }
        let instance = ServiceInstance(
            id: newID, pipeline: pipeline, overrides: overrides, configuration: configuration,
            publisher: publisher.load(), eventFile: eventFile, index: recorder
        ) { [weak self] i in self?.onEvents.load()?(i) }
        reporter.held.withLock { $0.instance = instance }
        registry.withLock { $0.append(instance) }
        persist()
        instance.controller.start()
        // When it ends by itself (completed, failed), it is no longer one to bring back.
        // The recorder is held here, not through the instance: a deleted instance may be gone before this thread
        // gets here, and its recorder's writer thread (and store) must still end.
        let watcher = Thread { [weak self, weak instance, eventFile, recorder] in
            instance?.controller.wait()
            eventFile?.close()
            recorder?.close()
            self?.persist()
            // Its streams close once they have its last events.
            if let self, let instance { self.onEvents.load()?(instance) }
        }
        watcher.name = "barscope-watch"
        watcher.start()
        return instance
    }

    /// The keys a service cannot honour per instance, refused at `POST` with the key named (never parsed and
    /// dropped): the broker connection, node name and spool are the process's (`serve --publish`, `--node`,
    /// `--spool`, `--spool-max`), and a window needs a display the service has. Output folders are checked here too,
    /// so a path that cannot be written is a 400, not a 201 and then a failed instance.
    static func checkServable(_ spec: PipelineSpec, _ configuration: RunConfiguration) throws {
        for (key, option) in [
            ("publish.url", "--publish"), ("publish.node", "--node"), ("publish.spool", "--spool"),
            ("publish.spool-max", "--spool-max"),
        ] where spec.values[key] != nil {
            let parts = key.split(separator: ".")
            throw BarscopeError.badValue(
                "[\(parts[0])] \(parts[1]): give \(option) to barscope serve (one connection to each broker, one "
                    + "node name and one spool serve every instance)")
        }
        if configuration.display {
            let environment = ProcessInfo.processInfo.environment
            if (environment["DISPLAY"] ?? "").isEmpty && (environment["WAYLAND_DISPLAY"] ?? "").isEmpty {
                throw BarscopeError.badValue(
                    "[display] enabled: this service has no display (DISPLAY is not set); watch the instance in the "
                        + "console or at /v1/instances/ID/stream.mjpg, or set display.enabled=false")
            }
        }
        var folders: [(String, String)] = []
        if let r = configuration.recording {
            folders.append(("[record] path", URL(fileURLWithPath: r.path).deletingLastPathComponent().path))
        }
        if let s = configuration.snapshotFolder { folders.append(("[snapshots] folder", s)) }
        for (name, folder) in folders {
            var isFolder: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder)
            // A recording's folder must be there (a snapshots folder is made).
            if !exists && name.hasPrefix("[record]") {
                throw BarscopeError.badValue("\(name): no such folder '\(folder)'")
            }
            if exists && (!isFolder.boolValue || !FileManager.default.isWritableFile(atPath: folder)) {
                throw BarscopeError.badValue("\(name): '\(folder)' is not a folder this service can write")
            }
        }
    }

    /// A page of sightings from the index (newest first).
    /// - Throws: ``BarscopeError`` when the index cannot be read.
    public func sightings(_ query: SightingQuery) throws -> SightingPage {
        try withIndex { try $0.search(query) }
    }

    /// Read cycles' results from the index (newest first).
    /// - Throws: ``BarscopeError`` when the index cannot be read.
    public func cycles(_ query: CycleQuery) throws -> [CycleRow] {
        try withIndex { try $0.searchCycles(query) }
    }

    /// The service's one reading connection to its index, opened when first needed and again after a failure.
    private func withIndex<T>(_ body: (SightingStore) throws -> T) throws -> T {
        guard let location = index.load()?.location else {
            throw BarscopeError.badInput("this service keeps no sightings index")
        }
        return try searchStore.withLock { store in
            do {
                if store == nil { store = try SightingIndexes.open(location) }
                return try body(store!)
            } catch {
                store?.close()
                store = nil
                throw error
            }
        }
    }

    /// Stops an instance (end of stream first: its recording is finished) and forgets it. Blocks until it has
    /// ended; call it off the main loop.
    /// - Returns: its final status.
    public func delete(_ id: String) throws -> JSONValue {
        guard let instance = instance(id) else { throw Failure.notFound("no instance '\(id)'") }
        guard instance.stop() else { throw Failure.timedOut("\(id): did not stop within 30 s (still stopping)") }
        let status = instance.status
        registry.withLock { $0.removeAll { $0.id == id } }
        publisher.load()?.unregister(id)
        persist()
        // Its frames' memory, freed, goes back to the system now: a long-running service whose instances come
        // and go keeps its resident memory at what the running ones use.
        bs_release_free_memory()
        return status
    }

    /// Stops every instance (SIGTERM), each finishing its recording; the state file keeps them, so that the next
    /// start brings them back.
    public func stopAll() {
        persisting.lock()
        stopping = true
        persisting.unlock()
        let all = instances
        let group = DispatchGroup()
        for i in all {
            group.enter()
            Thread.detachNewThread {
                if !i.ended { i.controller.stop(timeout: 30) }
                // Its sightings are in the index (or the spool) before the process ends.
                i.index?.close()
                group.leave()
            }
        }
        group.wait()
    }

    private let persisting = CountedLock()
    private var stopping = false

    /// The instances still running, written whole to a temporary file and renamed over the state file.
    func persist() {
        persisting.lock()
        defer { persisting.unlock() }
        // Shutting down: the instances stop, but they are the ones to bring back.
        guard !stopping else { return }
        let running = instances.filter { !$0.ended }
        let list = JSONValue.array(
            running.map { i in
                .object([
                    ("id", .string(i.id)), ("pipeline", .string(i.pipeline)),
                    ("set", .array(i.overrides.map { .array([.string($0.0), .string($0.1)]) })),
                ])
            })
        let text = JSONValue.object([("instances", list)]).encoded() + "\n"
        let temporary = stateFile + ".tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(text.utf8)) else { return }
        if let h = FileHandle(forUpdatingAtPath: temporary) {
            try? h.synchronize()
            try? h.close()
        }
        _ = rename(temporary, stateFile)
    }

    /// The state file's instances: started again with the same ids; one that cannot start is reported and left.
    /// - Returns: a line for each that could not start.
    public func restore() -> [String] {
        guard let data = FileContents.read(atPath: stateFile),
            let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let list = root["instances"] as? [[String: Any]]
        else { return [] }
        var problems: [String] = []
        for entry in list {
            guard let id = entry["id"] as? String, Self.isValidName(id), let pipeline = entry["pipeline"] as? String
            else {
                continue
            }
            let pairs = (entry["set"] as? [[String]] ?? []).compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
            do {
                try create(pipeline: pipeline, overrides: pairs, id: id)
            } catch {
                problems.append("\(stateFile): instance '\(id)': \(error)")
            }
        }
        return problems
    }
}
