import CBarscope
import CGStreamer
import Foundation
import Synchronization

/// The scanner branch of one run, from appsink to events: numbers come with the buffers (the tee's frame meta), a
/// pool of workers scans each frame's cropped luma plane (in tracked mode, between searches, only around the codes
/// last seen), and the lane delivers the results in frame order, outside any lock, through the tracker and the
/// duplicate filter to the event stream, the ledger (for the overlay) and the metrics.
///
/// Sendable: the pool and the counters are behind locks or atomics (the lane is set once); `prerolled` is touched by
/// appsink's streaming thread only; `sequencer` by the lane's delivering worker only, one at a time (the role passes
/// under the pool's lock), and by `finish()` once the lane is closed.
final class ScanStage: @unchecked Sendable {
    let parts: RunParts
    /// Frame order's consumer: the tracker and the duplicate filter. The payload: the frame's view signature when
    /// read cycles open on motion.
    private var sequencer: ResultSequencer<[UInt8]?>
    /// Tracked mode: the results of each full search, which the frames after it rescan around.
    let searches = SearchBoard()
    /// Untracked mode: the codes the frames before read, looked for again where a frame misses them.
    let known: KnownCodes?
    /// Tracked mode's decisions: which frames search, what a search reads, what a cut changed.
    let policy: SearchPolicy
    /// Tracked mode: where the picture changed since the search before (nil: every search reads the whole frame).
    let changes: ChangedAreas?
    /// Live streams started in this process: each takes the next phase of the tracked search (`SearchPolicy.phase`;
    /// 0 for a file, whose reads must not depend on what else the process ran). Streams started together, as a
    /// service's instances are, would otherwise all search on the same frames, and all search the whole frame on the
    /// same one, and their frames wait behind each other's searches and were dropped with cores idle (the
    /// measurements: docs/decisions.md, "The shared scanning pool").
    private static let liveStreams = Atomic<Int>(0)
    /// This run's place in the process's scanning pool, set once by `start()` (read on every frame without a lock);
    /// `left` after `stop()`.
    private let joined = AtomicLazyReference<ScanLane>()
    private let left = Atomic<Bool>(false)
    private var lane: ScanLane? { left.load(ordering: .acquiring) ? nil : joined.load() }
    /// The frame scanned at preroll, which appsink renders again as its first sample (streaming thread only).
    private var prerolled: Int? = nil

    init(_ parts: RunParts) {
        self.parts = parts
        let c = parts.configuration
        let k = c.input.isLive ? Self.liveStreams.add(1, ordering: .relaxed).oldValue : 0
        known = c.tracked ? nil : KnownCodes(window: 2, inOrder: !c.input.isLive)
        changes =
            c.tracked && c.trackedWholeSearchEvery > 1
            ? ChangedAreas(wholeEvery: c.trackedWholeSearchEvery, phase: k % c.trackedWholeSearchEvery) : nil
        policy = SearchPolicy(
            interval: c.tracked ? c.trackedInterval : 1, phase: k, small2DEvery: c.trackedSmall2DEvery,
            gated: changes != nil)
        sequencer = ResultSequencer(
            lostAfterFrames: parts.configuration.lostAfterFrames, duplicates: parts.configuration.duplicates,
            everyFrame: parts.configuration.everyFrame, confirmation: parts.configuration.confirmation)
    }

    /// Joins the shared scanning pool: only once the graph is built and wired, right before it plays, so that a
    /// graph that fails to build leaves nothing behind. `stop()` leaves it.
    func start(pool: ScanPool = .shared, name: String) {
        let c = parts.configuration
        let live = parts.settings
        // One per run: a code's profile averaged over the stream's frames, whichever worker scans them.
        let memory = c.hardCodes ? HardCodeMemory() : nil
        // A file's frames that build on the frames before them (tracked mode's rescans around the codes known, the
        // hard-code memory's averaged bars) are scanned one at a time, in order, so that each sees exactly those
        // frames: a file scanned twice, with any number of threads, gives the same events. Frames judged each on
        // its own (every frame) are scanned in parallel. A live stream's frames are scanned as they come.
        let inOrder = !c.input.isLive && (c.tracked || c.hardCodes)
        let l = pool.open(
            name: name, live: c.input.isLive, maxInFlight: inOrder ? 1 : c.scanThreads,
            generation: { live.decoderGeneration },
            light: { [policy] in policy.isBetweenSearches($0) },
            makeReader: {
                let v = live.values
                return BarcodeReader(
                    engine: v.engine, settings: v.scanner, thorough: false, hardCodes: c.hardCodes,
                    hardCodeMemory: memory)
            }
        ) { [weak self] scanner, job in self?.scan(job, with: scanner) ?? [.init(sequence: job.sequence, run: nil)] }
        _ = joined.storeIfNil(l)
    }

    /// Finishes the frames handed over, leaves the pool. Safe to call more than once, or without `start()`.
    func stop() {
        searches.end()
        known?.end()
        guard !left.exchange(true, ordering: .acquiringAndReleasing) else { return }
        joined.load()?.close()
    }

    /// Every frame handed over has been scanned and delivered (appsink's end of stream).
    func waitIdle() { lane?.waitIdle() }

    /// The lane's counts (nil before `start()` and after `stop()`).
    var laneCounts: (submitted: Int, dropped: Int, scanned: Int, waiting: Int, busyShare: Double)? {
        lane?.counts
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
        guard let lane else {
            gst_sample_unref(sample)
            return
        }
        // Back-pressure from the events' reader lands here, on a thread that holds no lock.
        parts.waitForRoom()
        let raw = buffer.map { bs_buffer_pts($0) } ?? .max
        var job = ScanPool.Job(frame: frame, ptsNs: raw == .max ? nil : UInt64(raw), sample: sample)
        job.stamp = buffer.flatMap { RegionTimeline.Stamp(buffer: $0) }
        lane.submit(job)
    }

    /// A scanning worker: scan; hands in the frame's delivery (and those of the frames held for it, when it is a
    /// search), or nothing when the frame is held for a search that its worker finishes.
    private func scan(_ job: ScanPool.Job, with scanner: BarcodeReader) -> [ScanLane.Delivery] {
        // The frame passed the tee before it came here (see `TeeStage.observe`).
        bs_handoff_receive(Unmanaged.passUnretained(parts.ledger).toOpaque())
        // The scanned area (the viewfinder grown by its codes' quiet zones); `deliver` keeps the reads wholly in the
        // viewfinder itself.
        let region = job.stamp?.scanArea
        let motion = parts.configuration.cycles.motion
        let c = parts.configuration
        let search = policy.search(for: job.sequence)
        // Tracked mode, between searches: a frame rescanned while the search before it still runs is held, so
        // that a code that search finds new is looked for in it too (a new code is then reported from that
        // search's frame on, whichever worker finishes first).
        let shadow = policy.isBetweenSearches(job.sequence)
        var held: SearchBoard.Held? = nil
        var late: [Detection]? = nil
        let (detections, view) =
            withLumaPlane(of: job.sample) { luma, _ -> ([Detection], [UInt8]?) in
                let view = motion ? ViewActivity.signature(luma) : nil
                var (found, gone, searchDone) = read(luma, job, region, scanner)
                guard shadow else { return (found, view) }
                if let result = searchDone {
                    found += catchUp(
                        luma, found, gone: gone, result, sequence: job.sequence, since: job.sequence - search, region,
                        scanner)
                    return (found, view)
                }
                var copy: [UInt8] = []
                luma.compactCopy(into: &copy) { _ in }
                held = SearchBoard.Held(
                    job: job, found: found, gone: gone, luma: copy, width: luma.width, height: luma.height, view: view,
                    disputed: scanner.takeDisputes())
                late = searches.hold(held!, until: search)
                if let late {
                    found += catchUp(
                        luma, found, gone: gone, late, sequence: job.sequence, since: job.sequence - search, region,
                        scanner)
                }
                return (found, view)
            } ?? ([], nil)
        if held != nil && late == nil { return [] }  // the search's worker hands it in
        var handed = [handIn(job, detections, view, disputed: scanner.takeDisputes())]
        guard c.tracked, job.sequence == search, policy.interval > 1 else { return handed }
        // A search: finish the frames held for it.
        for h in searches.finishSearch(search, detections).sorted(by: { $0.job.sequence < $1.job.sequence }) {
            let extra = h.luma.withUnsafeBytes { raw in
                catchUp(
                    LumaImage(base: raw.baseAddress!, width: h.width, height: h.height, stride: h.width), h.found,
                    gone: h.gone, detections, sequence: h.job.sequence, since: h.job.sequence - search,
                    h.job.stamp?.scanArea,
                    scanner)
            }
            handed.append(handIn(h.job, h.found + extra, h.view, disputed: h.disputed + scanner.takeDisputes()))
        }
        return handed
    }

    /// The codes a search found that a frame after it (rescanned around the codes known before) did not: looked
    /// for in that frame around where the search saw them. Not those the frame judged `gone` in a cut: it looked
    /// for them where they were, every line, and lost them all at once (at a clip's loop, the search before it
    /// holds the very codes the cut lost, and looking again cost every stream that saw the cut a heavy frame;
    /// docs/decisions.md has the measurements).
    private func catchUp(
        _ luma: LumaImage, _ found: [Detection], gone: [Detection], _ search: [Detection], sequence: Int, since: Int,
        _ region: PixelRect?, _ scanner: BarcodeReader
    ) -> [Detection] {
        let missing = Self.toCatchUp(search, found: found, gone: gone)
        guard !missing.isEmpty else { return [] }
        let around = missing.map { Expected(detection: $0, hasVelocity: false, framesSince: since) }
        // After a cut since that search, its codes were looked for on every line where the frames after it should
        // have them, and lost: sparse lines only. (A clip played again brings some back near where they were; on
        // every line, each frame up to the next search was a heavy one on every stream: docs/decisions.md.)
        let afterCut = policy.isAfterCut(sequence - since)
        let got = TrackedRegions.rescan(
            luma, around: around, mapping: CropMapping(region: region), viewfinder: region, with: scanner,
            everyLine: !afterCut)
        let new = got.filter { d in !found.contains { $0.type == d.type && $0.data == d.data } }
        searches.publish(sequence, new, search: false)
        return new
    }

    /// A frame's results, kept to the viewfinder, handed in for delivery in order.
    private func handIn(_ job: ScanPool.Job, _ found: [Detection], _ view: [UInt8]?, disputed: [Detection])
        -> ScanLane.Delivery
    {
        known?.record(job.sequence, found)
        // Read in the scanned area; reported only wholly inside the viewfinder.
        let viewfinder = job.stamp?.region
        let detections =
            viewfinder.map { v in
                found.compactMap { d -> Detection? in
                    guard v.contains(all: d.polygon) else { return nil }
                    var inside = d
                    inside.inViewfinder = true
                    return inside
                }
            } ?? found
        let scanned = ResultSequencer<[UInt8]?>.Scanned(
            sequence: job.sequence, frame: job.frame, ptsNs: job.ptsNs, detections: detections, disputed: disputed,
            payload: view)
        return ScanLane.Delivery(sequence: job.sequence) { [weak self] in self?.deliver(scanned) }
    }

    /// One frame, in order (the lane's delivering worker, no lock held): the tracker, read cycles, the ledger (for
    /// the overlay), the metrics and the events.
    private func deliver(_ scanned: ResultSequencer<[UInt8]?>.Scanned) {
        let r = sequencer.addInOrder(scanned)
        // Read cycles first: a cycle's snapshot is due on this frame before the overlay may draw it.
        let (closed, evidence) = parts.cycles.deliver(
            frame: r.frame, ptsNs: r.ptsNs, detections: r.detections, view: r.payload)
        let folder = parts.configuration.snapshotFolder
        var named = evidence.map { [CycleDesk.snapshotName($0)] } ?? []
        named += closed.filter { $0.outcome == .noread }.map { CycleDesk.snapshotName($0.cycle) }
        let arrival = parts.ledger.scanned(
            r.frame, detections: r.detections, appeared: r.appeared, named: folder == nil ? [] : named)
        parts.metrics.scanned(
            ptsNs: r.ptsNs, codes: sequencer.tracksStarted, latency: arrival.map { ContinuousClock.now - $0 })
        for e in r.events { parts.emit(e) }
        for c in closed {
            let snapshot = folder.map { ($0 as NSString).appendingPathComponent(CycleDesk.snapshotName(c.cycle)) }
            parts.emit(.cycle(c, snapshot: snapshot))
        }
    }

    /// The codes of a search that a frame after it still has to look for: neither found in it nor lost in its cut.
    static func toCatchUp(_ search: [Detection], found: [Detection], gone: [Detection]) -> [Detection] {
        func among(_ codes: [Detection], _ d: Detection) -> Bool {
            codes.contains { $0.type == d.type && $0.data == d.data }
        }
        return search.filter { d in !among(found, d) && !among(gone, d) }
    }

    /// After the run (every thread stopped): the open tracks close; frames scanned and codes seen.
    func finish() -> (frames: Int, codes: Int, unreported: Int) {
        let events = sequencer.finish()
        let (frames, codes) = (sequencer.delivered, sequencer.tracksStarted)
        let unreported = sequencer.unreported.unconfirmed + sequencer.unreported.disagreeing
        for e in events { parts.emit(e) }
        // (A no-read closed by the end of the stream has no frame left to draw.)
        let folder = parts.configuration.snapshotFolder
        for c in parts.cycles.finishRun() {
            let snapshot = folder.map { ($0 as NSString).appendingPathComponent(CycleDesk.snapshotName(c.cycle)) }
            parts.emit(.cycle(c, snapshot: c.outcome == .noread ? nil : snapshot))
        }
        return (frames, codes, unreported)
    }
}
