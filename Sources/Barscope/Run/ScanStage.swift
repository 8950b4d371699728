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
    /// Untracked mode: the codes the frames before read, looked for again where a frame misses them.
    private let known: KnownCodes?
    /// Tracked mode: searches made so far, and whether the last full-size 2D read found a code (the full-size 2D
    /// read of the changed areas runs at every gated search while there are such codes, else at every
    /// `trackedSmall2DEvery`-th).
    private let searchNumber = Atomic<Int>(0)
    private let small2DInView = Atomic<Bool>(false)
    /// Tracked mode: the band of the frame the next whole-frame small-2D read covers (`small2DBand`), and whether
    /// one is due (it waits for a gated search: one that fell due on a whole search would take both).
    private let small2DBandNumber = Atomic<Int>(0)
    private let small2DBandDue = Atomic<Bool>(false)
    /// Tracked mode: where the picture changed since the search before (nil: every search reads the whole frame).
    private let changes: ChangedAreas?
    /// Tracked mode, live: the frame of each interval this stream searches on (0 for a file, whose reads must not
    /// depend on what else the process ran). Streams started together, as a service's instances are, would
    /// otherwise all search on the same frames, and all search the whole frame on the same one, and their frames wait
    /// behind each other's searches and were dropped with cores idle (the measurements: docs/decisions.md, "The
    /// shared scanning pool").
    private let searchPhase: Int
    /// Tracked mode: the search before the last cut a frame between searches found (-1: none yet). The frames after
    /// a cut up to the next search leave the changed areas to that search (see `read`), and look again for that
    /// search's codes on sparse lines only (see `catchUp`).
    private let searchBeforeCut = Atomic<Int>(-1)
    /// Live streams started in this process: each takes the next phase.
    private static let liveStreams = Atomic<Int>(0)
    /// This run's place in the process's scanning pool (from `start()` to `stop()`).
    private let lane = Locked<ScanLane?>(nil)
    /// The frame scanned at preroll, which appsink renders again as its first sample (streaming thread only).
    private var prerolled: Int? = nil

    init(_ parts: RunParts) {
        self.parts = parts
        let c = parts.configuration
        let k = c.input.isLive ? Self.liveStreams.add(1, ordering: .relaxed).oldValue : 0
        searchPhase = k % max(1, c.trackedInterval)
        known = c.tracked ? nil : KnownCodes(window: 2, inOrder: !c.input.isLive)
        changes =
            c.tracked && c.trackedWholeSearchEvery > 1
            ? ChangedAreas(wholeEvery: c.trackedWholeSearchEvery, phase: k % c.trackedWholeSearchEvery) : nil
        sequencer = Locked(
            ResultSequencer(
                lostAfterFrames: parts.configuration.lostAfterFrames, duplicates: parts.configuration.duplicates,
                everyFrame: parts.configuration.everyFrame, confirmation: parts.configuration.confirmation))
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
            light: { [weak self] in self?.isBetweenSearches($0) ?? false },
            makeReader: {
                let v = live.values
                return BarcodeReader(
                    engine: v.engine, settings: v.scanner, thorough: false, hardCodes: c.hardCodes,
                    hardCodeMemory: memory)
            }
        ) { [weak self] scanner, job in self?.scan(job, with: scanner) }
        lane.withLock { $0 = l }
    }

    /// Finishes the frames handed over, leaves the pool. Safe to call more than once, or without `start()`.
    func stop() {
        searches.end()
        known?.end()
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
        // The scanned area (the viewfinder grown by its codes' quiet zones); `deliver` keeps the reads wholly in the
        // viewfinder itself.
        let region = parts.ledger.stamp(of: job.frame)?.scanArea
        let motion = parts.configuration.cycles.motion
        let c = parts.configuration
        let interval = max(1, c.trackedInterval)
        let search = self.search(for: job.sequence, interval: interval)
        // Tracked mode, between searches: a frame rescanned while the search before it still runs is held, so
        // that a code that search finds new is looked for in it too (a new code is then reported from that
        // search's frame on, whichever worker finishes first).
        let shadow = isBetweenSearches(job.sequence)
        var held: SearchBoard.Held? = nil
        var late: [Detection]? = nil
        let (detections, view) =
            withLumaPlane(of: job.sample) { luma, _ -> ([Detection], [UInt8]?) in
                let view = motion ? ViewActivity.signature(luma) : nil
                var (found, gone) = read(luma, job, region, scanner)
                guard shadow else { return (found, view) }
                if let result = searches.searchResult(search) {
                    found += catchUp(
                        luma, found, gone: gone, result, sequence: job.sequence, since: job.sequence - search, region,
                        scanner)
                    return (found, view)
                }
                var copy: [UInt8] = []
                luma.compactCopy(into: &copy) { _ in }
                held = SearchBoard.Held(
                    job: job, found: found, gone: gone, luma: copy, width: luma.width, height: luma.height, view: view)
                late = searches.hold(held!, until: search)
                if let late {
                    found += catchUp(
                        luma, found, gone: gone, late, sequence: job.sequence, since: job.sequence - search, region,
                        scanner)
                }
                return (found, view)
            } ?? ([], nil)
        if held != nil && late == nil { return }  // the search's worker finishes it
        deliver(job, detections, view)
        guard c.tracked, job.sequence == search, interval > 1 else { return }
        // A search: finish the frames held for it, in order.
        for h in searches.finishSearch(search, detections).sorted(by: { $0.job.sequence < $1.job.sequence }) {
            let extra = h.luma.withUnsafeBytes { raw in
                catchUp(
                    LumaImage(base: raw.baseAddress!, width: h.width, height: h.height, stride: h.width), h.found,
                    gone: h.gone, detections, sequence: h.job.sequence, since: h.job.sequence - search,
                    parts.ledger.stamp(of: h.job.frame)?.scanArea,
                    scanner)
            }
            deliver(h.job, h.found + extra, h.view)
        }
    }

    /// Tracked mode's frames between searches, rescanned only around the known codes: the pool's light frames.
    private func isBetweenSearches(_ sequence: Int) -> Bool {
        let c = parts.configuration
        let interval = max(1, c.trackedInterval)
        return c.tracked && interval > 1 && sequence != search(for: sequence, interval: interval)
    }

    /// The search a frame goes with: the last one at or before it. The first frame is a search, then every
    /// `interval`-th from the stream's phase on (the frames before the phase go with the first).
    private func search(for sequence: Int, interval: Int) -> Int {
        guard interval > 1, sequence >= searchPhase else { return 0 }
        return sequence - (sequence - searchPhase) % interval
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
        let afterCut = searchBeforeCut.load(ordering: .relaxed) == sequence - since
        let got = TrackedRegions.rescan(
            luma, around: around, mapping: CropMapping(region: region), viewfinder: region, with: scanner,
            everyLine: !afterCut)
        let new = got.filter { d in !found.contains { $0.type == d.type && $0.data == d.data } }
        searches.publish(sequence, new, search: false)
        return new
    }

    /// Puts a frame's results in order: read cycles, the ledger (for the overlay), the metrics and the events.
    private func deliver(_ job: ScanPool.Job, _ found: [Detection], _ view: [UInt8]?) {
        known?.record(job.sequence, found)
        // Read in the scanned area; reported only wholly inside the viewfinder.
        let viewfinder = parts.ledger.stamp(of: job.frame)?.region
        let detections =
            viewfinder.map { v in
                found.compactMap { d -> Detection? in
                    guard v.contains(all: d.polygon) else { return nil }
                    var inside = d
                    inside.inViewfinder = true
                    return inside
                }
            } ?? found
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

    /// The codes of a search that a frame after it still has to look for: neither found in it nor lost in its cut.
    static func toCatchUp(_ search: [Detection], found: [Detection], gone: [Detection]) -> [Detection] {
        func among(_ codes: [Detection], _ d: Detection) -> Bool {
            codes.contains { $0.type == d.type && $0.data == d.data }
        }
        return search.filter { d in !among(found, d) && !among(gone, d) }
    }

    /// A frame's codes; and, between searches, the known codes it lost in a cut (see `catchUp`).
    private func read(_ luma: LumaImage, _ job: ScanPool.Job, _ region: PixelRect?, _ scanner: BarcodeReader)
        -> (found: [Detection], gone: [Detection])
    {
        let c = parts.configuration
        let mapping = CropMapping(region: region)
        guard c.tracked else {
            scanner.zbarScanner.setDensity(1)
            let found = scanner.read(luma, mapping: mapping, viewfinder: region, frame: job.frame)
            guard let known else { return (found, []) }
            let all = scanner.withKnownCodes(
                known.recent(before: job.sequence), missingFrom: found, in: luma, mapping: mapping, viewfinder: region)
            return (all, [])
        }
        if search(for: job.sequence, interval: max(1, c.trackedInterval)) == job.sequence {
            let found = trackedSearch(luma, sequence: job.sequence, mapping: mapping, region: region, with: scanner)
            searches.publish(job.sequence, found, search: true)
            return (found, [])
        }
        // Between searches: around where each known code should be now (moved by its velocity), from whatever
        // earlier frames the workers have finished.
        let expected = searches.predicted(for: job.sequence)
        let (found, cut) = follow(expected, in: luma, sequence: job.sequence, mapping: mapping, region: region, scanner)
        searches.publish(job.sequence, found, search: false)
        let gone = cut ? expected.map(\.detection) : []
        let searchBefore = search(for: job.sequence, interval: max(1, c.trackedInterval))
        if cut { searchBeforeCut.store(searchBefore, ordering: .relaxed) }
        // After a cut the whole picture changed: the next search, a frame to three later, reads all of it (more than
        // half of it changed), where each frame before it read a 16th, the most changed blocks, not where codes are.
        // At the RTSP bench clip's loop every stream of a service read those areas on the same frames, on top of the
        // cut's own rescans (docs/decisions.md, "Streams per machine").
        guard let changes, searchBeforeCut.load(ordering: .relaxed) != searchBefore else { return (found, gone) }
        // And where the picture changed since the search and nothing known explains it: a code that came into view
        // since is read now, not at the next search.
        // Explained: each code known, where it is now and was at the search, with the card or label it moves on
        // (seen: a demo card's edge 56 px beyond its code, changed on every frame): grown by half its smaller side.
        let since = job.sequence - searchBefore
        // (After a cut, where the codes were explains nothing: others may have come there.)
        let explained = (found.map { ($0, 0.0) } + (cut ? [] : expected).map { ($0.detection, $0.speed) }).map {
            d, speed in
            let b = d.bounds
            return Self.searched(
                d, mapping, grownBy: max(24, min(b.width, b.height) / 2) + Int((speed * Double(since)).rounded(.up)))
        }
        let areas = changes.unexplained(in: luma, explained: explained)
        guard !areas.isEmpty else { return (found, gone) }
        // As a search reads them, the full-size read for small 2D codes included (the areas are small).
        let (candidates, exact) = searchAreas(
            luma, areas, mapping: mapping, region: region, small2D: true, with: scanner)
        let new = confirm(candidates, exact, besides: found, luma, mapping: mapping, region: region, with: scanner)
        searches.publish(job.sequence, new, search: true)
        return (found + new, gone)
    }

    /// The known codes rescanned where they should be in frame `sequence`; at a cut (all lost at once:
    /// `TrackedRegions.rescanUnlessCut`) the board forgets them.
    private func follow(
        _ expected: [Expected], in luma: LumaImage, sequence: Int, mapping: CropMapping, region: PixelRect?,
        _ scanner: BarcodeReader
    ) -> (found: [Detection], cut: Bool) {
        let result = TrackedRegions.rescanUnlessCut(
            luma, around: expected, mapping: mapping, viewfinder: region, with: scanner)
        if result.cut { searches.forget(expected.map(\.detection), before: sequence) }
        return result
    }

    /// Tracked mode's search: every code in the frame, whatever its size, for as little work as that takes. It reads
    /// the areas that changed since the search before (`ChangedAreas`; the whole frame at every n-th search) and
    /// rescans the codes known before where they should be now:
    /// - 1D codes at full resolution along every `trackedSearchLines`-th row and column (a 1D code of 1-pixel
    ///   modules is crossed by dozens of such lines; ZBar's QR stage, which binarizes the whole image once it finds
    ///   finder patterns, stays off);
    /// - 2D codes at half size (a quarter of the pixels: modules of 2 px and more);
    /// - 2D codes at full size on what half size did not explain: a copy with the 2D codes half size found painted
    ///   over, so that ZBar's QR stage only runs when there is a code half size missed (a small one).
    /// Each code found by the sparse lines or at half size is read again at full size in its own small region, for
    /// its exact box and text.
    private func trackedSearch(
        _ luma: LumaImage, sequence: Int, mapping: CropMapping, region: PixelRect?, with scanner: BarcodeReader
    ) -> [Detection] {
        let zbar = scanner.zbarScanner
        defer {
            zbar.setKinds(.all)
            zbar.setDensity(1)
        }
        let n = searchNumber.add(1, ordering: .relaxed).oldValue
        let small2DDue = n % max(1, parts.configuration.trackedSmall2DEvery) == 0
        let small2D = small2DInView.load(ordering: .relaxed) || small2DDue
        // The codes known before, where they should be now, first: what they explain is not searched again.
        var known: [Detection] = []
        if changes != nil {
            known =
                follow(
                    searches.predicted(for: sequence, waiting: false), in: luma, sequence: sequence, mapping: mapping,
                    region: region, scanner
                ).found
        }
        let areas = changes?.areas(in: luma, known: knownAreas(known, mapping))
        // The whole frame's small-2D read costs more than the rest of a whole search, and a stream's search that
        // took both held a worker long enough for the other streams' frames to be dropped (docs/decisions.md, the
        // bands): after the first search it runs on the changed areas only, and on one band of the frame at
        // a gated search (below). (Every search whole, `trackedWholeSearchEvery` 1, keeps the whole-frame read: no
        // search is gated. A frame that changed size mid-stream is searched whole without it; its bands follow.)
        let wholeSmall2D = areas == nil && (n == 0 || changes == nil)
        let small2DOnAreas = small2D && (areas != nil || wholeSmall2D)
        let searched = areas ?? [PixelRect(x: 0, y: 0, width: luma.width, height: luma.height)]
        var (candidates, exact) = searchAreas(
            luma, searched, mapping: mapping, region: region, small2D: small2DOnAreas, with: scanner)
        let every = max(1, parts.configuration.trackedSmall2DEvery)
        if changes != nil && n % (2 * every) == every { small2DBandDue.store(true, ordering: .relaxed) }
        let readBand = areas != nil && small2DBandDue.exchange(false, ordering: .relaxed)
        if readBand {
            let band = Self.small2DBand(
                height: luma.height, turn: small2DBandNumber.add(1, ordering: .relaxed).oldValue)
            // Codes that stand still where nothing changes are read one band at a time, at every other due search
            // or the first gated search after it (the whole frame in about 8 x trackedSmall2DEvery searches, 128
            // frames by default); the codes already found are painted over.
            let offset = CropMapping(offsetX: mapping.offsetX, offsetY: mapping.offsetY + band.y)
            let rows = PixelRect(x: 0, y: band.y, width: luma.width, height: band.height)
            let painted = (known + exact + candidates).map { d in
                let b = d.bounds
                return Bounds(x: b.x - offset.offsetX, y: b.y - offset.offsetY, width: b.width, height: b.height)
            }
            zbar.setKinds(.matrix)
            zbar.setDensity(1)
            if let part = luma.cropped(to: rows) {
                exact += scanner.readPaintedOver(part, paintedOver: painted, mapping: offset, viewfinder: region)
            }
        }
        // (Only when a full-size 2D read ran: a whole search after the first reads none.)
        if small2DOnAreas || readBand {
            small2DInView.store(!exact.isEmpty, ordering: .relaxed)
        }
        zbar.setKinds(.all)
        return known + confirm(candidates, exact, besides: known, luma, mapping: mapping, region: region, with: scanner)
    }

    /// A search's reads of `areas` (the image's pixels): the candidates and the small 2D codes read at full size
    /// (`searchCandidates`, with `small2D`), in full-frame pixels. Leaves ZBar reading every kind, on every line.
    private func searchAreas(
        _ luma: LumaImage, _ areas: [PixelRect], mapping: CropMapping, region: PixelRect?, small2D: Bool,
        with scanner: BarcodeReader
    ) -> (candidates: [Detection], exact: [Detection]) {
        defer {
            scanner.zbarScanner.setKinds(.all)
            scanner.zbarScanner.setDensity(1)
        }
        var candidates: [Detection] = []
        var exact: [Detection] = []
        for area in areas {
            guard let part = luma.cropped(to: area) else { continue }
            let offset = CropMapping(offsetX: mapping.offsetX + area.x, offsetY: mapping.offsetY + area.y)
            let (c, e) = searchCandidates(part, mapping: offset, region: region, small2D: small2D, with: scanner)
            candidates += c
            exact += e
        }
        return (candidates, exact)
    }

    /// The codes a search found besides those in `known`: the exact reads, and each candidate read again at full
    /// size in a tight region (placed to a line spacing or two; none for a code already read).
    private func confirm(
        _ candidates: [Detection], _ exact: [Detection], besides known: [Detection], _ luma: LumaImage,
        mapping: CropMapping, region: PixelRect?, with scanner: BarcodeReader
    ) -> [Detection] {
        var found = known
        func isFound(_ d: Detection) -> Bool {
            found.contains { $0.type == d.type && $0.data == d.data && $0.bounds.intersects(d.bounds) }
        }
        for d in exact where !isFound(d) { found.append(d) }
        let around = candidates.filter { !isFound($0) }.map {
            Expected(detection: $0, hasVelocity: true, framesSince: 0, speed: 2)
        }
        for d in TrackedRegions.rescan(luma, around: around, mapping: mapping, viewfinder: region, with: scanner)
        where !isFound(d) {
            found.append(d)
        }
        return Array(found.dropFirst(known.count))
    }

    /// Tracked mode's full-size read for small 2D codes over the whole frame, a band at a time: the frame's rows in
    /// up to `small2DBands` bands, each grown by `small2DOverlap` rows on either side, so that every 2D code of up
    /// to twice that height (64 modules under 2 px) lies wholly inside one (a frame under 256 rows is one band).
    /// The rows of the band for `turn` (0, 1, 2, ... in turn): the first row and the count.
    static func small2DBand(height: Int, turn: Int) -> (y: Int, height: Int) {
        let bands = max(1, min(small2DBands, height / (2 * small2DOverlap)))
        let k = turn % bands
        let y0 = max(0, k * height / bands - small2DOverlap)
        let y1 = min(height, (k + 1) * height / bands + small2DOverlap)
        return (y0, y1 - y0)
    }
    static let small2DBands = 4
    static let small2DOverlap = 64

    /// Where the codes read are in the searched image's pixels, with their quiet zones (10 modules of a 1D code,
    /// 4 of a QR code's: an eighth of the code's length, and a few pixels, covers them).
    private func knownAreas(_ known: [Detection], _ mapping: CropMapping) -> [PixelRect] {
        known.map { d in Self.searched(d, mapping, grownBy: max(d.bounds.width, d.bounds.height) / 8 + 4) }
    }

    /// A code's bounds in the searched image's pixels, grown by `grow` on every side.
    private static func searched(_ d: Detection, _ mapping: CropMapping, grownBy grow: Int) -> PixelRect {
        let b = d.bounds
        return PixelRect(
            x: b.x - mapping.offsetX - grow, y: b.y - mapping.offsetY - grow, width: b.width + 2 * grow,
            height: b.height + 2 * grow)
    }

    /// One area's reads for a search: the candidates (1D codes along sparse lines and 2D codes at half size, in
    /// full-frame pixels, to be read again at full size) and the small 2D codes read at full size (`small2D`).
    private func searchCandidates(
        _ luma: LumaImage, mapping: CropMapping, region: PixelRect?, small2D: Bool, with scanner: BarcodeReader
    ) -> (candidates: [Detection], exact: [Detection]) {
        let zbar = scanner.zbarScanner
        zbar.setKinds(.linear)
        zbar.setDensity(max(1, parts.configuration.trackedSearchLines))
        var coarse = scanner.read(luma, mapping: mapping, viewfinder: nil)
        zbar.setKinds(.matrix)
        zbar.setDensity(1)
        let half = scanner.readHalved(luma)
        // (ZBar's kinds are `.matrix` here: the full-size read is for 2D codes only.)
        let exact =
            small2D
            ? scanner.readPaintedOver(luma, paintedOver: half.map(\.bounds), mapping: mapping, viewfinder: region) : []
        coarse += half.map { d in
            var d = d
            d.polygon = d.polygon.map(mapping.toFrame)
            d.bounds = Bounds(enclosing: d.polygon)
            return d
        }
        return (coarse, exact)
    }

    /// After the run (every thread stopped): the open tracks close; frames scanned and codes seen.
    func finish() -> (frames: Int, codes: Int, unreported: Int) {
        let (events, frames, codes, unreported) = sequencer.withLock { seq in
            let closing = seq.finish()
            return (closing, seq.delivered, seq.tracksStarted, seq.unreported.unconfirmed + seq.unreported.disagreeing)
        }
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
