import CGStreamer
import Foundation

/// The process's one set of scanning threads, shared by every running pipeline: one per core, each taking the next
/// frame from the streams in turn, so that many cameras in one process share the cores instead of each starting its
/// own workers and competing blindly.
///
/// Each run registers a `ScanLane`. Workers pick lanes round robin (one frame from each lane that has one waiting,
/// then again), so a busy stream cannot starve the others: under overload every stream is served the same number of
/// frames. A live lane bounds a frame's wait in time: a frame that has waited two of its stream's frame times is
/// dropped (whole, and counted) once a newer frame of its stream waits behind it. Frames that come in a burst (a
/// network stream's, a decoder's) are all kept, as long as the workers reach them in time.
/// A file's lane never drops: `submit` waits for room, and the file's decoder waits with it.
///
/// The threads exist only while some lane is open: with nothing running, the process has no scanning thread.
///
/// Sendable: every lane's queue and counters are guarded by the pool's one `condition`.
public final class ScanPool: @unchecked Sendable {
    /// The process's pool: `BARSCOPE_SCAN_WORKERS` threads, or one per core.
    public static let shared = ScanPool(
        workers: ProcessInfo.processInfo.environment["BARSCOPE_SCAN_WORKERS"].flatMap(Int.init)
            ?? ProcessInfo.processInfo.activeProcessorCount)

    /// One frame to scan. Owns one reference to the sample (released after the scan, or when dropped).
    public struct Job: @unchecked Sendable {
        // Sendable: the sample is handed over, used by one worker, released.
        /// Order of scanning within its lane, without gaps (given when a worker takes the frame: a dropped frame
        /// takes none).
        public var sequence = 0
        public let frame: Int
        public let ptsNs: UInt64?
        public let sample: OpaquePointer
        /// When it was handed over (a live lane bounds how long it waits).
        var arrived = ContinuousClock.now
        /// The frame's viewfinder stamp, as its buffer carries it (nil: the whole frame).
        var stamp: RegionTimeline.Stamp? = nil
        public init(frame: Int, ptsNs: UInt64?, sample: OpaquePointer) {
            self.frame = frame
            self.ptsNs = ptsNs
            self.sample = sample
        }
    }

    /// Threads for one stream's video decoder: the cores shared out among the streams running in the process (this
    /// one included, counted when its graph is built), at least one. With one stream the decoder may use every
    /// core; with as many streams as cores or more, each decoder has one thread, so that N streams start N decoder
    /// threads and the pool's workers rather than N per core (frame threading also delays each frame by a frame per
    /// thread). A stream started before others keeps what it got.
    public static func decoderThreads(streams: Int, cores: Int = ProcessInfo.processInfo.activeProcessorCount) -> Int {
        max(1, cores / max(1, streams))
    }

    public let workers: Int
    let condition = CountedCondition()
    private var lanes: [ScanLane] = []
    private var cursor = 0
    private var running = 0
    private var busy = 0
    private var threadNumber = 0
    let meter = BusyMeter()

    public init(workers: Int) { self.workers = max(1, workers) }

    /// Opens a lane for one stream.
    /// - Parameters:
    ///   - name: for the metrics (the instance, or the input).
    ///   - live: a live stream's lane keeps only the newest frame; a file's waits.
    ///   - maxInFlight: how many workers may scan this lane's frames at once (at most the pool's).
    ///   - light: whether the lane's frame of a given sequence is a light one (tracked mode's rescans between
    ///     searches): only such a frame may take the worker kept for the other streams.
    ///   - makeReader: a reader for the lane's settings; `generation` tells when they changed (a reader made for
    ///     an older generation is made anew before its next frame).
    ///   - process: runs on a worker thread with one of the lane's readers; must not keep the sample. What it hands in
    ///     runs in the frames' order (`ScanLane.Delivery`).
    public func open(
        name: String, live: Bool, maxInFlight: Int, generation: @escaping @Sendable () -> Int = { 0 },
        light: @escaping @Sendable (Int) -> Bool = { _ in false },
        makeReader: @escaping @Sendable () -> BarcodeReader,
        process: @escaping @Sendable (BarcodeReader, Job) -> [ScanLane.Delivery]
    ) -> ScanLane {
        let lane = ScanLane(
            pool: self, name: name, live: live, maxInFlight: min(max(1, maxInFlight), workers),
            generation: generation, light: light, makeReader: makeReader, process: process)
        condition.lock()
        lanes.append(lane)
        let missing = workers - running
        running += missing
        condition.unlock()
        for _ in 0..<missing { startWorker() }
        return lane
    }

    /// The pool's state now: waiting frames (all lanes), busy workers, lanes open, the share of the workers' time
    /// spent scanning over the last seconds, and worker seconds spent scanning since the process started.
    public var status: (queued: Int, busy: Int, lanes: Int, busyShare: Double, busySeconds: Double) {
        condition.lock()
        defer { condition.unlock() }
        return (
            lanes.reduce(0) { $0 + $1.waiting.count }, busy, lanes.count, meter.share(workers: workers), meter.total
        )
    }

    /// Threads scanning now (tests: none are left once every lane is closed).
    public var threadsRunning: Int {
        condition.lock()
        defer { condition.unlock() }
        return running
    }

    // MARK: - Lanes' calls (under `condition`)

    func remove(_ lane: ScanLane) {
        lanes.removeAll { $0 === lane }
        condition.broadcast()
    }

    // MARK: - Workers

    private func startWorker() {
        condition.lock()
        let n = threadNumber
        threadNumber += 1
        condition.unlock()
        let thread = Thread { [self] in
            // A frame's end and the taking of what comes next (its delivery in order, or another frame) are one hold
            // of the pool's lock; deliveries run outside it.
            var done: Done? = nil
            while let work = next(after: done) {
                switch work {
                case .scan(let lane, let job, let started, let idle):
                    let reader = idle ?? lane.newReader()
                    let handed = lane.process(reader.reader, job)
                    gst_sample_unref(job.sample)
                    done = .scanned(Finished(lane: lane, reader: reader, started: started, handed: handed))
                case .deliver(let lane, let due):
                    for run in due { run() }
                    done = .delivered(lane)
                }
            }
        }
        thread.name = "barscope-scan-\(n)"
        thread.start()
    }

    /// A frame scanning longer than this (a 1080p frame takes tens of ms) marks its lane as stalled while other lanes
    /// are open: it gets no other worker until that frame is done, so that a scan that hangs holds one worker, never
    /// the pool.
    static let stallSeconds = 1.0

    /// A worker's next task: a frame to scan, or the deliveries that came due with the frame it finished.
    private enum Work {
        case scan(ScanLane, Job, ContinuousClock.Instant, ScanLane.Reader?)
        case deliver(ScanLane, [@Sendable () -> Void])
    }

    /// What a worker's last task was.
    private enum Done {
        case scanned(Finished)
        case delivered(ScanLane)
    }

    /// First, the deliveries that the worker's last task made due in its lane (the delivering role, when no other
    /// worker holds it: the frames leave in order, one worker at a time, with no lock held while they run).
    /// Then the next frame, round robin over the lanes that have one; nil when no lane is open (the thread ends).
    /// First pass: lanes under their fair share of the workers (the workers divided among the lanes that have
    /// frames waiting or being scanned), so that under load each stream is served in turn. Second pass (workers to
    /// spare): any lane under its own limit that is not stalled, so that one stream alone may use every core.
    /// While another stream has handed over a frame in the last second, no stream holds more than all workers but
    /// one: a scan that hangs can never take the whole pool.
    private func next(after done: Done?) -> Work? {
        var shed: [OpaquePointer] = []
        condition.lock()
        defer {
            condition.unlock()
            shed.forEach { gst_sample_unref($0) }
        }
        switch done {
        case .scanned(let f):
            finished(f)
            if let due = f.lane.takeDue() { return .deliver(f.lane, due) }
        case .delivered(let lane):
            lane.delivered()
            condition.broadcast()
            if let due = lane.takeDue() { return .deliver(lane, due) }
        case nil: break
        }
        while true {
            if lanes.isEmpty {
                running -= 1
                condition.broadcast()
                return nil
            }
            let now = ContinuousClock.now
            let active = lanes.reduce(0) { $0 + (!$1.waiting.isEmpty || $1.inFlight > 0 ? 1 : 0) }
            let fairShare = max(1, workers / max(1, active))
            let recent = lanes.filter { $0.lastSubmit.map { now - $0 < .seconds(1) } ?? false }
            var heldByStall = false
            for pass in 0..<2 {
                for step in 0..<lanes.count {
                    let i = (cursor + step) % lanes.count
                    let lane = lanes[i]
                    // While others are busy, the last worker is kept for them, except for a light frame: with two
                    // workers and two streams, a stream's next rescan otherwise waited behind its own long search
                    // with the other worker idle, and frames were dropped (docs/decisions.md, "The shared scanning
                    // pool").
                    // A light frame reads only small regions around known codes; a scan that hangs is a search,
                    // which never gets the kept worker, so a hung stream holds one worker, never the pool.
                    let othersBusy = recent.contains { $0 !== lane }
                    let reserve = othersBusy && !lane.light(lane.dispatched)
                    let cap = min(pass == 0 ? fairShare : lane.maxInFlight, reserve ? max(1, workers - 1) : workers)
                    guard !lane.waiting.isEmpty, lane.inFlight < cap else { continue }
                    // Frames that waited past their bound give way to the newer one behind them.
                    shed += lane.shed(now)
                    if lanes.count > 1, lane.inFlight > 0, lane.stalled(now) {
                        heldByStall = true
                        continue
                    }
                    cursor = (i + 1) % lanes.count
                    var job = lane.waiting.removeFirst()
                    job.sequence = lane.dispatched
                    lane.dispatched += 1
                    lane.inFlight += 1
                    lane.started.append(now)
                    busy += 1
                    condition.broadcast()
                    return .scan(lane, job, now, lane.idleReader())
                }
            }
            if heldByStall {
                // A stalled lane's frames wait for a worker; look again when that may have changed.
                _ = condition.wait(until: Date(timeIntervalSinceNow: Self.stallSeconds))
            } else {
                condition.wait()
            }
        }
    }

    /// A frame a worker finished scanning, with the reader it used.
    private struct Finished {
        let lane: ScanLane
        let reader: ScanLane.Reader
        let started: ContinuousClock.Instant
        let handed: [ScanLane.Delivery]
    }

    /// Under `condition`.
    private func finished(_ done: Finished) {
        let now = ContinuousClock.now
        let lane = done.lane
        busy -= 1
        lane.inFlight -= 1
        if let i = lane.started.firstIndex(of: done.started) { lane.started.remove(at: i) }
        lane.scanned += 1
        lane.idle.append(done.reader)
        lane.handIn(done.handed)
        meter.add(done.started, now)
        lane.meter.add(done.started, now)
        condition.broadcast()
    }
}
