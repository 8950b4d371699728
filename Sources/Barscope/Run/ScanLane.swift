import CGStreamer
import Foundation

/// One stream's place in the shared pool: its waiting frames, its readers (one per worker scanning it at a time;
/// ZBar scanners are not thread-safe) and its counters.
///
/// Sendable: its state is guarded by the pool's condition.
public final class ScanLane: @unchecked Sendable {
    /// How long a live frame may wait for a worker, in its stream's frame times. A bound in frames, not in time
    /// alone, keeps a slow stream's frames (a 5 frames/s camera's) from being dropped behind a long search of another
    /// stream; one in time, not a count of frames waiting, keeps the frames of a burst (three at once from a network
    /// stream, which a count of two dropped with the cores half idle).
    static let liveWaitFrames = 2.0
    /// A live lane never holds more frames than this waiting (a burst that outruns the bound's time).
    static let liveMostWaiting = 8

    public let name: String
    public let live: Bool
    let maxInFlight: Int
    private unowned let pool: ScanPool
    private let generation: @Sendable () -> Int
    let light: @Sendable (Int) -> Bool
    private let makeReader: @Sendable () -> BarcodeReader
    let process: @Sendable (BarcodeReader, ScanPool.Job) -> [Delivery]

    /// What a scanned frame leaves for the stream's consumers (the tracker, read cycles, ledger, metrics, events),
    /// run in the order the frames were taken (`Job.sequence`), by one worker at a time and outside every lock: the
    /// worker that hands in the frame next in order runs it, and any after it that are ready. Every frame a worker
    /// took is handed in once: by its own scan, or later by another's (tracked mode's frames held for a search).
    public struct Delivery: Sendable {
        public let sequence: Int
        /// nil: nothing to run for it (its place in the order only).
        public let run: (@Sendable () -> Void)?
        public init(sequence: Int, run: (@Sendable () -> Void)?) {
            self.sequence = sequence
            self.run = run
        }
    }

    // Guarded by pool.condition:
    var waiting: [ScanPool.Job] = []
    var inFlight = 0
    var dispatched = 0
    var scanned = 0
    var dropped = 0
    var submitted = 0
    var idle: [Reader] = []
    /// Frames handed in and not yet run, by sequence; the next one in order; whether a worker is running some now.
    private var handedIn: [Int: Delivery] = [:]
    private var nextDelivery = 0
    private var delivering = false
    /// When each frame being scanned was taken (for telling a stalled lane).
    var started: [ContinuousClock.Instant] = []
    /// When a frame was last handed over (a lane that has not had one for a second leaves the workers to others).
    var lastSubmit: ContinuousClock.Instant? = nil
    /// When the stream's last frames arrived (at most `ScanLane.intervalWindow + 1`): its time between frames is
    /// their span over their count, in which a burst and the gap before it average out to the frame rate. (A running
    /// mean weighed the burst's own near-zero gaps most, and shrank the bound just as a burst came.)
    private var arrivals: [ContinuousClock.Instant] = []
    static let intervalWindow = 16
    private var closed = false
    let meter = BusyMeter()

    struct Reader {
        let generation: Int
        let reader: BarcodeReader
    }

    init(
        pool: ScanPool, name: String, live: Bool, maxInFlight: Int, generation: @escaping @Sendable () -> Int,
        light: @escaping @Sendable (Int) -> Bool, makeReader: @escaping @Sendable () -> BarcodeReader,
        process: @escaping @Sendable (BarcodeReader, ScanPool.Job) -> [Delivery]
    ) {
        self.pool = pool
        self.name = name
        self.live = live
        self.maxInFlight = maxInFlight
        self.generation = generation
        self.light = light
        self.makeReader = makeReader
        self.process = process
    }

    /// Hands a frame over; takes over the sample's reference. Live: never waits (frames waiting past their bound
    /// are dropped for this newer one). File: waits while `maxInFlight` frames of this lane are waiting or being
    /// scanned.
    public func submit(_ job: ScanPool.Job) {
        let c = pool.condition
        c.lock()
        if !live {
            while waiting.count + inFlight >= maxInFlight && !closed { c.wait() }
        }
        if closed {
            c.unlock()
            gst_sample_unref(job.sample)
            return
        }
        var job = job
        job.arrived = .now
        if live {
            arrivals.append(job.arrived)
            if arrivals.count > ScanLane.intervalWindow + 1 { arrivals.removeFirst() }
        }
        submitted += 1
        lastSubmit = job.arrived
        waiting.append(job)
        let droppedSamples = live ? shed(job.arrived) : []
        c.broadcast()
        c.unlock()
        droppedSamples.forEach { gst_sample_unref($0) }
    }

    /// A live lane's frames that waited past the bound while a newer one waits behind them, or that overflow the
    /// most it holds: taken out and counted; the caller releases them outside the lock. Under `pool.condition`.
    func shed(_ now: ContinuousClock.Instant) -> [OpaquePointer] {
        guard live else { return [] }
        // Until two frames have come, a second between frames.
        let interval =
            arrivals.count > 1
            ? min(2, max(0.001, (arrivals.last! - arrivals[0]).inSeconds / Double(arrivals.count - 1))) : 1
        let bound = ScanLane.liveWaitFrames * interval
        var out: [OpaquePointer] = []
        while waiting.count > 1,
            waiting.count > ScanLane.liveMostWaiting || (now - waiting[0].arrived).inSeconds > bound
        {
            out.append(waiting.removeFirst().sample)
            dropped += 1
        }
        return out
    }

    /// Returns when every frame handed over has been scanned (or dropped) and delivered.
    public func waitIdle() {
        let c = pool.condition
        c.lock()
        while !isIdle { c.wait() }
        c.unlock()
    }

    /// Nothing waits, is scanned or is being delivered, and nothing handed in is ready to run (a frame still held
    /// for a search is in flight with it). Under `pool.condition`.
    private var isIdle: Bool {
        waiting.isEmpty && inFlight == 0 && !delivering && handedIn[nextDelivery] == nil
    }

    /// Under `pool.condition`: frames handed in by a worker's scan.
    func handIn(_ deliveries: [Delivery]) {
        for d in deliveries { handedIn[d.sequence] = d }
    }

    /// Under `pool.condition`: the deliveries now due, in order, with the lane's delivering role (the caller runs
    /// them, then gives the role back with `delivered()`); nil when another worker is delivering or none is due.
    func takeDue() -> [@Sendable () -> Void]? {
        guard !delivering else { return nil }
        var due: [@Sendable () -> Void] = []
        while let d = handedIn.removeValue(forKey: nextDelivery) {
            nextDelivery += 1
            if let run = d.run { due.append(run) }
        }
        guard !due.isEmpty else { return nil }
        delivering = true
        return due
    }

    /// Under `pool.condition`: the delivering role given back.
    func delivered() { delivering = false }

    /// Finishes the frames already handed over, then leaves the pool. Safe to call more than once.
    public func close() {
        let c = pool.condition
        c.lock()
        closed = true
        c.broadcast()
        while !isIdle { c.wait() }
        pool.remove(self)
        idle = []
        c.unlock()
    }

    /// This lane's counts: frames handed over, dropped while waiting, scanned; waiting now; the share of the pool's
    /// workers' time it used over the last seconds.
    public var counts: (submitted: Int, dropped: Int, scanned: Int, waiting: Int, busyShare: Double) {
        let c = pool.condition
        c.lock()
        defer { c.unlock() }
        return (submitted, dropped, scanned, waiting.count, meter.share(workers: pool.workers))
    }

    /// Whether a frame of this lane has been scanning longer than the pool's stall bound.
    func stalled(_ now: ContinuousClock.Instant) -> Bool {
        guard let oldest = started.min() else { return false }
        return now - oldest > .seconds(ScanPool.stallSeconds)
    }

    /// An idle reader made for the current settings, if there is one (under `pool.condition`; the generation is
    /// an atomic read).
    func idleReader() -> Reader? {
        let now = generation()
        while let r = idle.popLast() {
            if r.generation == now { return r }
        }
        return nil
    }

    /// A new reader for the current settings (outside the pool's lock: making one loads ZBar and zxing-cpp).
    func newReader() -> Reader {
        let now = generation()
        return Reader(generation: now, reader: makeReader())
    }
}
