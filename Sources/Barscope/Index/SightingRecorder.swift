import Foundation

/// Turns a run's events into sightings and writes them to the index off the streaming threads: ``take(_:)`` only
/// queues (it is called on the controller's delivery thread, and never waits on the database); a writer thread of
/// its own writes the queue in batches. While the database cannot be written, the rows wait (one per sighting, its
/// newest state) and are written when it comes back; the first failure and the return are told through `note`.
public final class SightingRecorder: @unchecked Sendable {
    // Sendable: the state below is guarded by `lock`; the store is used by the writer thread alone (and by
    // `close`, after that thread has ended).

    /// What the rows say of where they come from.
    public struct Context: Sendable {
        public var camera: String
        public var pipeline: String
        public var node: String
        public var recording: Recording?
        /// A live source's times are the wall clock's as the frames come; a file's are its start plus the frame's
        /// time, the start given (`--start`) or taken as the file's last change less its length (a recording is
        /// last written when it ends).
        public var live: Bool
        public var file: String?
        public var start: Date?
        /// Where rows the index could not take by the end wait for the next recorder (of any run) to write them.
        public var spool: String?
        /// Seconds a frame when the source's rate is known (the demo's, a camera's).
        public var frameSeconds: Double?
        /// The run's key, when it must be the same every time (an archive's file: ``ArchiveFile/run``).
        public var run: String?
        /// The file scanned is the recording itself (an archive's): rows name it, with the time in it.
        public var fileIsRecording = false

        public init(
            camera: String, pipeline: String, node: String, recording: Recording?, live: Bool, file: String? = nil,
            start: Date? = nil, spool: String? = nil, frameSeconds: Double? = nil
        ) {
            self.spool = spool
            self.frameSeconds = frameSeconds
            self.camera = camera
            self.pipeline = pipeline
            self.node = node
            self.recording = recording
            self.live = live
            self.file = file
            self.start = start
        }
    }

    /// Opens the store, on the writer thread: again after a failure to open (a database that is away at first).
    private let open: @Sendable () throws -> SightingStore
    private var store: SightingStore?
    let context: Context
    /// A new value each run of the source (a restarted stream numbers its tracks from 1 again).
    var run = UUID().uuidString.lowercased()
    private let note: @Sendable (String) -> Void
    let lock = CountedCondition()
    /// Sightings in view, by track, and the rows waiting to be written, by track (newest state only).
    private var inView: [Int: Sighting] = [:]
    var pending: [String: Sighting] = [:]
    /// A file's rows wait for the end, when its start is known.
    private var held: [String: Sighting] = [:]
    /// Read cycles' results waiting to be written, by run and number; a file's held for its start.
    var pendingCycles: [String: CycleRow] = [:]
    var heldCycles: [String: CycleRow] = [:]
    /// When each row was last queued (in its own times): every-frame updates are written at most once a second.
    private var lastQueued: [String: Date] = [:]
    /// The first event's frame and time: the run's frame 0 is that time less its frame number's worth of frames.
    var origin: (pts: Double, frame: Int)?
    /// Nanoseconds a frame, measured between events (when no rate is given).
    private var measured: Double?
    var lastPts: UInt64 = 0
    private var totalFrames: Int?
    private var anchor: (wall: Date, pts: Double)?
    /// The recording of the current run (a session file of its own after a reconnection), and its number.
    var recording: Recording?
    private var session = 0
    private var closing = false
    private var closeStarted = false
    private var closeDone = false
    private var failing = false
    private var written = 0
    private var spooled = 0
    /// Spool files this recorder took (removed once their rows are in the index, or spooled again).
    var claimed: [String] = []
    /// The writer thread has ended (`close` waits for it on `lock`).
    private var writerDone = false

    /// - Parameter open: the store, opened on the writer thread (and again while it fails).
    public init(
        open: @escaping @Sendable () throws -> SightingStore, context: Context,
        note: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.open = open
        self.context = context
        self.note = note
        recording = context.recording
        if let r = context.run { run = r }
        claimSpool()
        let t = Thread { [weak self] in self?.writeLoop() }
        t.name = "barscope-index"
        t.start()
    }

    /// Rows written so far.
    public var writtenCount: Int { lock.withLock { written } }

    /// One event of the run (the delivery thread's; returns at once).
    public func take(_ event: Event) {
        lock.withLock {
            switch event {
            case .appeared(let frame, let pts, let d, let track):
                appear(frame, pts, d, track)
            case .lost(let frame, let pts, let track, _, _, let framesSeen):
                guard var s = inView.removeValue(forKey: track) else { return }
                s.lastSeen = time(frame, pts).wall
                s.frames = framesSeen
                queue(s)
                lastQueued[s.key] = nil
            case .detection(let frame, let pts, let d, let track?):
                // Every-frame reports: a new track is a sighting; a known one's end moves on (written again at
                // most once a second, and at the end).
                guard var s = inView[track] else {
                    appear(frame, pts, d, track)
                    return
                }
                s.lastSeen = time(frame, pts).wall
                s.frames += 1
                inView[track] = s
                if s.lastSeen.timeIntervalSince(lastQueued[s.key] ?? .distantPast) >= 1 { queue(s) }
            case .snapshot(_, _, let path, let tracks):
                for t in tracks {
                    guard var s = inView[t] else { continue }
                    s.snapshot = Self.absolute(path)
                    inView[t] = s
                    queue(s)
                }
            case .eos(let frames, _, _, _, _):
                totalFrames = frames
                for (_, s) in inView { queue(s) }
                inView = [:]
                lastQueued = [:]
            case .cycle(let c, let snapshot):
                takeCycle(c, snapshot: snapshot)
            case .reconnecting:
                // The stream starts again: its tracks are numbered from 1 again, in a run of their own.
                for (_, s) in inView { queue(s) }
                inView = [:]
                if !context.live { flushHeld(start: context.start ?? fileStart()) }
                run = UUID().uuidString.lowercased()
                // A run that played makes the controller record the next one to a session file of its own.
                if origin != nil, let r = context.recording {
                    session += 1
                    recording = r.session(session)
                }
                origin = nil
                measured = nil
                anchor = nil
                totalFrames = nil
            default:
                return
            }
        }
    }

    /// A code's first sight: its row, with the recording (the segment's own file) and the time in it.
    private func appear(_ frame: Int, _ pts: UInt64?, _ d: Detection, _ track: Int) {
        let at = time(frame, pts)
        var s = Sighting(
            run: run, track: track, code: d.data, symbology: d.type, camera: context.camera,
            pipeline: context.pipeline, node: context.node, firstSeen: at.wall, lastSeen: at.wall, frames: 1,
            polygon: d.polygon)
        (s.recording, s.offsetSeconds) = place(at.offset)
        inView[track] = s
        queue(s)
    }

    /// The recording file holding a time of the run (a segment's own file), and the time in that file.
    func place(_ offset: Double?) -> (String?, Double?) {
        guard let offset else { return (nil, nil) }
        if let r = recording {
            guard let seconds = r.segmentSeconds, seconds > 0 else { return (Self.absolute(r.path), offset) }
            let n = Int(offset / Double(seconds))
            return (Self.absolute(r.segment(n)), offset - Double(n * seconds))
        }
        if context.fileIsRecording, let file = context.file { return (Self.absolute(file), offset) }
        return (nil, nil)
    }

    /// Nanoseconds a frame: the source's rate when given, else measured between events, else 30 frames/s.
    var frameNs: Double { context.frameSeconds.map { $0 * 1e9 } ?? measured ?? 1e9 / 30 }

    /// The wall-clock time of a frame, and its time in the recording (which starts at the run's frame 0).
    func time(_ frame: Int, _ pts: UInt64?) -> (wall: Date, offset: Double?) {
        let p = Double(pts ?? lastPts)
        lastPts = max(lastPts, UInt64(p))
        if origin == nil { origin = (p, frame) }
        let o = origin!
        if context.frameSeconds == nil, frame >= o.frame + 10 { measured = (p - o.pts) / Double(frame - o.frame) }
        let zero = o.pts - Double(o.frame) * frameNs
        let offset = max(0, (p - zero) / 1e9)
        if context.live {
            if anchor == nil { anchor = (Date().addingTimeInterval(-(o.pts - zero) / 1e9), zero) }
            let a = anchor!
            return (a.wall.addingTimeInterval((p - a.pts) / 1e9), offset)
        }
        // A file's: the time from its start for now; made absolute once the start is known (`close`).
        return (Date(timeIntervalSince1970: offset), offset)
    }

    private func queue(_ s: Sighting) {
        lastQueued[s.key] = s.lastSeen
        if context.live {
            pending[s.key] = s
            lock.broadcast()
        } else {
            held[s.key] = s
        }
    }

    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    /// Writes what is queued every quarter second; waits a second after a failure before trying again (a close
    /// ends either wait: every change of the state is broadcast on `lock`, for the writer and for `close`).
    private func writeLoop() {
        defer {
            lock.withLock {
                writerDone = true
                lock.broadcast()
            }
        }
        // Written since the store last settled.
        var unsettled = false
        while true {
            lock.lock()
            if unsettled && pending.isEmpty && pendingCycles.isEmpty && !closing {
                // Nothing waits: the store tidies up now rather than in the middle of a burst.
                lock.unlock()
                store?.settle()
                unsettled = false
                continue
            }
            while pending.isEmpty && pendingCycles.isEmpty && !closing { lock.wait() }
            if pending.isEmpty && pendingCycles.isEmpty && closing {
                lock.unlock()
                return
            }
            let batch = Array(pending.values)
            let cycles = Array(pendingCycles.values)
            pending = [:]
            pendingCycles = [:]
            lock.unlock()
            do {
                if store == nil { store = try open() }
                try store!.write(batch.sorted { $0.run < $1.run || ($0.run == $1.run && $0.track < $1.track) })
                try store!.write(cycles: cycles.sorted { $0.cycle < $1.cycle })
                unsettled = true
                lock.withLock {
                    written += batch.count
                    // What an earlier run left in the spool is in the index now.
                    if pending.isEmpty && pendingCycles.isEmpty {
                        for f in claimed { try? FileManager.default.removeItem(atPath: f) }
                        claimed = []
                    }
                    if failing {
                        failing = false
                        note("the sightings index is written again (\(batch.count) sightings caught up)")
                    }
                }
                // Batches: what comes in the next quarter second goes in one transaction (a close ends the wait).
                waitOnLock(until: Date(timeIntervalSinceNow: 0.25)) { closing }
            } catch {
                let retry = lock.withLock { () -> Bool in
                    // The rows wait again (a newer state of the same sighting, queued meanwhile, wins).
                    for s in batch where pending[s.key] == nil { pending[s.key] = s }
                    for c in cycles where pendingCycles[c.key] == nil { pendingCycles[c.key] = c }
                    if !failing {
                        failing = true
                        note("the sightings index cannot be written (\(error)); sightings wait for it")
                    }
                    return !closing
                }
                if !retry {
                    return
                }
                waitOnLock(until: Date(timeIntervalSinceNow: 1)) { closing }
            }
        }
    }

    /// Waits on `lock` until `done` holds (its setter broadcasts) or `until`.
    private func waitOnLock(until: Date, _ done: () -> Bool) {
        lock.lock()
        while !done() && lock.wait(until: until) {}
        lock.unlock()
    }

    /// Writes what is left (a file's rows now, with their times) and closes the store; waits for the writer at
    /// most `timeout` seconds. Rows the index could not take by then are counted in the answer.
    /// - Returns: rows not written.
    @discardableResult
    public func close(timeout: Double = 10) -> Int {
        // Closed once: a second caller (serve's stop and the instance's watcher both close it) waits for the first.
        let first = lock.withLock { () -> Bool in
            defer { closeStarted = true }
            return !closeStarted
        }
        guard first else {
            waitOnLock(until: Date(timeIntervalSinceNow: timeout + 1)) { closeDone }
            return lock.withLock { pending.count }
        }
        defer {
            lock.withLock {
                closeDone = true
                lock.broadcast()
            }
        }
        lock.withLock {
            for (_, s) in inView { queue(s) }
            inView = [:]
            if !context.live { flushHeld(start: context.start ?? fileStart()) }
            closing = true
            lock.broadcast()
        }
        waitOnLock(until: Date(timeIntervalSinceNow: timeout)) { writerDone }
        let left = lock.withLock { () -> Int in
            guard !pending.isEmpty || !pendingCycles.isEmpty, let folder = context.spool else { return pending.count }
            // The rows wait in the spool (those claimed from it among them) for the next recorder.
            let text =
                pending.values.map { $0.json.encoded() + "\n" }.joined()
                + pendingCycles.values.map { $0.json.encoded() + "\n" }.joined()
            let file = (folder as NSString).appendingPathComponent("sightings-\(UUID().uuidString.lowercased()).jsonl")
            if FileManager.default.createFile(atPath: file + ".part", contents: Data(text.utf8)),
                rename(file + ".part", file) == 0
            {
                for f in claimed { try? FileManager.default.removeItem(atPath: f) }
                claimed = []
                spooled = pending.count
                pending = [:]
                pendingCycles = [:]
            }
            return pending.count
        }
        if lock.withLock({ writerDone }) { store?.close() }
        return left
    }

    /// Rows written to the spool at the end (written to the index by a later recorder).
    public var spooledCount: Int { lock.withLock { spooled } }

    /// A file's rows, their times made absolute from its start, queued for writing (under the lock).
    private func flushHeld(start: Date) {
        for (key, var s) in held {
            s.firstSeen = start.addingTimeInterval(s.firstSeen.timeIntervalSince1970)
            s.lastSeen = start.addingTimeInterval(s.lastSeen.timeIntervalSince1970)
            pending[key] = s
        }
        held = [:]
        for (key, var c) in heldCycles {
            c.opened = start.addingTimeInterval(c.opened.timeIntervalSince1970)
            c.closed = start.addingTimeInterval(c.closed.timeIntervalSince1970)
            pendingCycles[key] = c
        }
        heldCycles = [:]
        lock.broadcast()
    }

    /// A file's start: its last change less its length; anything else (the demo) started now, less its length.
    private func fileStart() -> Date {
        // Its length: the frames the run counted (eos), else up to the last event.
        let zero = origin.map { $0.pts - Double($0.frame) * frameNs } ?? Double(lastPts)
        let length = totalFrames.map { Double($0) * frameNs / 1e9 } ?? max(0, (Double(lastPts) - zero) / 1e9)
        if let file = context.file,
            let modified = (try? FileManager.default.attributesOfItem(atPath: file))?[.modificationDate] as? Date
        {
            return modified.addingTimeInterval(-length)
        }
        return Date().addingTimeInterval(-length)
    }
}

extension Sighting {
    /// The row's key: its run and track.
    var key: String { "\(run)/\(track)" }
}
