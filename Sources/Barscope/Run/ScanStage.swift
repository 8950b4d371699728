import CBarscope
import CGStreamer
import Foundation
import Synchronization

/// The scanner branch of one run, from appsink to events: numbers come with the buffers (the tee's frame meta), a
/// pool of workers scans each frame's cropped luma plane (in tracked mode, between searches, only around the codes
/// last seen), and one sequencer puts the results back in frame order through the tracker and the duplicate filter
/// before they go to the event stream, the ledger (for the overlay) and the metrics.
///
/// Sendable: the pool, the sequencer and the counters are behind locks or atomics; `prerolled` and `submitted` are
/// touched by appsink's streaming thread only.
final class ScanStage: @unchecked Sendable {
    private let parts: RunParts
    /// The payload: the frame's view signature when read cycles open on motion.
    private let sequencer: Locked<ResultSequencer<[UInt8]?>>
    /// Tracked mode: the results of each full search, which the frames after it rescan around.
    let searches = SearchBoard()
    private let searchCount = Atomic<Int>(0)
    /// Tracked mode: whether the half-size search finds what the full-size one does.
    private let halfSizeSearch = Atomic<Bool>(false)
    /// This run's place in the process's scanning pool (from `start()` to `stop()`).
    private let lane = Locked<ScanLane?>(nil)
    /// The frame scanned at preroll, which appsink renders again as its first sample (streaming thread only).
    private var prerolled: Int? = nil

    init(_ parts: RunParts) {
        self.parts = parts
        sequencer = Locked(
            ResultSequencer(
                lostAfterFrames: parts.configuration.lostAfterFrames, duplicates: parts.configuration.duplicates,
                everyFrame: parts.configuration.everyFrame))
    }

    /// Joins the shared scanning pool: only once the graph is built and wired, right before it plays, so that a
    /// graph that fails to build leaves nothing behind. `stop()` leaves it.
    func start(pool: ScanPool = .shared, name: String) {
        let c = parts.configuration
        let live = parts.settings
        let l = pool.open(
            name: name, live: c.input.isLive, maxInFlight: c.scanThreads,
            generation: { live.decoderGeneration },
            makeReader: {
                let v = live.values
                return BarcodeReader(engine: v.engine, settings: v.scanner)
            }
        ) { [weak self] scanner, job in self?.scan(job, with: scanner) }
        lane.withLock { $0 = l }
    }

    /// Finishes the frames handed over, leaves the pool. Safe to call more than once, or without `start()`.
    func stop() {
        searches.end()
        let l = lane.withLock { l -> ScanLane? in
            defer { l = nil }
            return l
        }
        l?.close()
    }

    /// Every frame handed over has been scanned and delivered (appsink's end of stream).
    func waitIdle() { lane.withLock { $0 }?.waitIdle() }

    /// The lane's counts (nil before `start()` and after `stop()`).
    var laneCounts: (submitted: Int, dropped: Int, scanned: Int, waiting: Int, busyShare: Double)? {
        lane.withLock { $0 }?.counts
    }

    /// appsink's streaming thread: hands the frame to the pool (a file's waits for room; a live one's never
    /// waits). Takes over the sample.
    func submit(_ sample: OpaquePointer, preroll: Bool) {
        let buffer = gst_sample_get_buffer(sample)
        let number = buffer.map { bs_buffer_frame_number($0) } ?? -1
        let frame = number >= 0 ? Int(number) : -1
        // The buffer scanned at preroll comes again as the first sample: scan each frame once.
        if preroll {
            prerolled = frame
        } else if frame >= 0, frame == prerolled {
            prerolled = nil
            gst_sample_unref(sample)
            return
        }
        guard let lane = lane.withLock({ $0 }) else {
            gst_sample_unref(sample)
            return
        }
        // Back-pressure from the events' reader lands here, on a thread that holds no lock.
        parts.waitForRoom()
        let raw = buffer.map { bs_buffer_pts($0) } ?? .max
        lane.submit(ScanPool.Job(frame: frame, ptsNs: raw == .max ? nil : UInt64(raw), sample: sample))
    }

    /// A scanning worker: scan, then deliver every frame that is ready, in order.
    private func scan(_ job: ScanPool.Job, with scanner: BarcodeReader) {
        let region = parts.ledger.stamp(of: job.frame)?.region
        let motion = parts.configuration.cycles.motion
        let (detections, view) =
            withLumaPlane(of: job.sample) { luma, _ in
                (read(luma, job, region, scanner), motion ? ViewActivity.signature(luma) : nil)
            } ?? ([], nil)
        // Bookkeeping under the lock (the events are queued, never delivered, here); the order of frames holds.
        sequencer.withLock { seq in
            let ready = seq.add(
                .init(sequence: job.sequence, frame: job.frame, ptsNs: job.ptsNs, detections: detections, payload: view)
            )
            for r in ready {
                // Read cycles first: a cycle's snapshot is due on this frame before the overlay may draw it.
                let (closed, evidence) = parts.cycles.deliver(
                    frame: r.frame, ptsNs: r.ptsNs, detections: r.detections, view: r.payload)
                let folder = parts.configuration.snapshotFolder
                var named = evidence.map { [CycleDesk.snapshotName($0)] } ?? []
                named += closed.filter { $0.outcome == .noread }.map { CycleDesk.snapshotName($0.cycle) }
                let arrival = parts.ledger.scanned(
                    r.frame, detections: r.detections, appeared: r.appeared, named: folder == nil ? [] : named)
                parts.metrics.scanned(
                    ptsNs: r.ptsNs, codes: seq.tracksStarted, latency: arrival.map { ContinuousClock.now - $0 })
                for e in r.events { parts.emit(e) }
                for c in closed {
                    let snapshot = folder.map {
                        ($0 as NSString).appendingPathComponent(CycleDesk.snapshotName(c.cycle))
                    }
                    parts.emit(.cycle(c, snapshot: snapshot))
                }
            }
        }
    }

    private func read(_ luma: LumaImage, _ job: ScanPool.Job, _ region: PixelRect?, _ scanner: BarcodeReader)
        -> [Detection]
    {
        let c = parts.configuration
        let mapping = CropMapping(region: region)
        guard c.tracked else {
            scanner.zbarScanner.setDensity(1)
            return scanner.read(luma, mapping: mapping, viewfinder: region)
        }
        if job.sequence % max(1, c.trackedInterval) == 0 {
            let found = trackedSearch(luma, mapping: mapping, region: region, with: scanner)
            searches.publish(job.sequence, found, search: true)
            return found
        }
        // Between searches: around where each known code should be now (moved by its velocity), from whatever
        // earlier frames the workers have finished.
        let found = TrackedRegions.rescan(
            luma, around: searches.predicted(for: job.sequence), mapping: mapping, viewfinder: region, with: scanner)
        searches.publish(job.sequence, found, search: false)
        return found
    }

    /// Tracked mode's full search. While the codes in view read as well from the frame at half size (a quarter of
    /// the pixels: modules of 2 px and more), searches run there and each code found is read again at full size in
    /// its own small region, for its exact box and text. Every `validateEvery`-th search runs at full size and at
    /// half size on the same frame: half size stays in use only while it finds every code full size finds (small
    /// codes turn it off; a code too small for half size is found at the next full-size search).
    private func trackedSearch(_ luma: LumaImage, mapping: CropMapping, region: PixelRect?, with scanner: BarcodeReader)
        -> [Detection]
    {
        scanner.zbarScanner.setDensity(parts.configuration.trackedSearchDensity)
        let n = searchCount.add(1, ordering: .relaxed).oldValue
        if n % TrackedSearch.validateEvery == 0 {
            let found = scanner.read(luma, mapping: mapping, viewfinder: region)
            let half = Set(scanner.readHalved(luma).map { $0.type + "\u{0}" + $0.data })
            halfSizeSearch.store(found.allSatisfy { half.contains($0.type + "\u{0}" + $0.data) }, ordering: .relaxed)
            return found
        }
        guard halfSizeSearch.load(ordering: .relaxed) else {
            return scanner.read(luma, mapping: mapping, viewfinder: region)
        }
        let coarse = scanner.readHalved(luma).map { d -> Expected in
            var d = d
            d.polygon = d.polygon.map(mapping.toFrame)
            d.bounds = Bounds(enclosing: d.polygon)
            // Placed to a pixel or two: a tight region around it is enough.
            return Expected(detection: d, hasVelocity: true, framesSince: 0, speed: 2)
        }
        return TrackedRegions.rescan(luma, around: coarse, mapping: mapping, viewfinder: region, with: scanner)
    }

    /// After the run (every thread stopped): the open tracks close; frames scanned and codes seen.
    func finish() -> (frames: Int, codes: Int) {
        let (events, frames, codes) = sequencer.withLock { seq in (seq.finish(), seq.delivered, seq.tracksStarted) }
        for e in events { parts.emit(e) }
        // (A no-read closed by the end of the stream has no frame left to draw.)
        let folder = parts.configuration.snapshotFolder
        for c in parts.cycles.finishRun() {
            let snapshot = folder.map { ($0 as NSString).appendingPathComponent(CycleDesk.snapshotName(c.cycle)) }
            parts.emit(.cycle(c, snapshot: c.outcome == .noread ? nil : snapshot))
        }
        return (frames, codes)
    }
}
