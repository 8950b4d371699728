import Foundation
import Synchronization

/// Every frame of a run, by its number: given once at the tee (where the number is attached to the buffer as a
/// meta and travels with it down both branches), with its pts, arrival time and viewfinder stamp; later its
/// results, and the tracks that appeared on it. The crop, the scanner and the overlay look their frame up by
/// number, never by pts, so repeated or missing timestamps change nothing.
///
/// An entry goes when both branches have passed its frame: each branch meets frames in increasing order, so the
/// scanner's delivering frame N (or the overlay's drawing it) means every earlier frame is done on that side, scanned
/// or dropped. No size limit and no pruning by guesswork.
///
/// Sendable: all state is guarded by `condition`, but for the time of the last move, an atomic.
final class FrameLedger: @unchecked Sendable {
    struct Entry {
        var ptsNs: UInt64?
        var arrival: ContinuousClock.Instant
        var stamp: RegionTimeline.Stamp
        var results: [Detection]? = nil
        /// Tracks that appeared on this frame, whose annotated picture `--snapshots` keeps.
        var appeared: [Int] = []
        /// Snapshots due on this frame by name (a read cycle's evidence).
        var named: [String] = []
        /// The scanner delivered it (a live source's scanner skips frames when it falls behind).
        var scanned = false
    }

    /// A frame whose annotated picture is due as a snapshot: the tracks that appeared (on it, or, live, since the
    /// last frame drawn).
    struct Snapshot: Equatable, Sendable {
        var frame: Int
        var ptsNs: UInt64?
        var tracks: [Int]
        /// Also written under these names (read cycles' evidence).
        var names: [String] = []
        var isEmpty: Bool { tracks.isEmpty && names.isEmpty }
    }

    private let condition = CountedCondition()
    private var entries: [Int: Entry] = [:]
    private var lowest = 0
    private var next = 0
    private var scannedThrough = -1
    private var drawnThrough = -1
    private var latest: [Detection] = []
    /// Live: tracks that appeared since the last frame drawn (the overlay shows the newest results, so the next
    /// frame drawn is the one that shows them).
    private var appearedSinceDrawn: (frame: Int, tracks: [Int])? = nil
    private var namedSinceDrawn: [String] = []
    private var ended = false
    /// Frames that left the ledger without being scanned (a live source's scanner took a newer one).
    private var skipped = 0
    private var lastArrival = ContinuousClock.now
    /// When anything last moved downstream, in nanoseconds after `origin`: an atomic, so that the encoder's every
    /// buffer (`moved()`) takes no lock.
    private let origin = ContinuousClock.now
    private let lastMoveNs = Atomic<Int64>(0)
    private var lastScan = ContinuousClock.now

    /// Files: the overlay waits for its own frame's results. Live: it draws the newest.
    let frameAccurate: Bool
    /// Whether an overlay branch draws (and so must pass a frame before its entry goes).
    let drawn: Bool

    init(frameAccurate: Bool, drawn: Bool) {
        self.frameAccurate = frameAccurate
        self.drawn = drawn
    }

    private func locked<R>(_ body: () -> R) -> R {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    /// The tee: a new frame; returns its number.
    func admit(ptsNs: UInt64?, stamp: RegionTimeline.Stamp) -> Int {
        let now = ContinuousClock.now
        return locked {
            let n = next
            next += 1
            entries[n] = Entry(ptsNs: ptsNs, arrival: now, stamp: stamp)
            lastArrival = now
            return n
        }
    }

    /// Frames that reached the tee so far.
    var admitted: Int { locked { next } }
    /// When the last frame reached the tee, and when anything last moved downstream (scanned, drawn, encoded).
    var clocks: (arrival: ContinuousClock.Instant, move: ContinuousClock.Instant, scan: ContinuousClock.Instant) {
        let move = origin + .nanoseconds(lastMoveNs.load(ordering: .relaxed))
        return locked { (lastArrival, move, lastScan) }
    }

    /// Something moved downstream (the recording's encoder gave a buffer): a stop that waits for the end of stream
    /// is still getting somewhere.
    func moved() { noteMove(ContinuousClock.now) }

    private func noteMove(_ at: ContinuousClock.Instant) {
        let (seconds, atto) = (at - origin).components
        lastMoveNs.store(seconds * 1_000_000_000 + atto / 1_000_000_000, ordering: .relaxed)
    }

    /// The scanner delivers frame `frame` (in order) with its results.
    /// - Returns: when the frame reached the tee (for the latency).
    /// - Parameter named: snapshots due on this frame by name (a live source's go on the next frame drawn).
    func scanned(_ frame: Int, detections: [Detection], appeared: [Int], named: [String] = [])
        -> ContinuousClock.Instant?
    {
        locked {
            lastScan = ContinuousClock.now
            noteMove(lastScan)
            latest = detections
            scannedThrough = max(scannedThrough, frame)
            let arrival = entries[frame]?.arrival
            entries[frame]?.scanned = true
            if drawn { entries[frame]?.results = detections }
            if frameAccurate && drawn {
                entries[frame]?.appeared = appeared
                entries[frame]?.named = named
            } else if drawn && !(appeared.isEmpty && named.isEmpty) {
                let earlier = appearedSinceDrawn?.tracks ?? []
                appearedSinceDrawn = (appearedSinceDrawn?.frame ?? frame, earlier + appeared)
                namedSinceDrawn += named
            }
            prune()
            condition.broadcast()
            return arrival
        }
    }

    /// What the overlay draws on frame `frame`: its own results (frame-accurate: waits for them, at most `timeout`
    /// seconds; live: at most `liveBound`, else the newest, so that a recording is never held up by more than that),
    /// the stamp, and the tracks whose snapshot this picture is. A live frame drawn with the newest results drew a
    /// moving code where it was a frame or two before (16 px behind on the demo's QR code).
    /// - Returns: nil detections when the wait timed out.
    func forDrawing(_ frame: Int, timeout: Double, liveBound: Double = 0.1) -> (
        detections: [Detection]?, stamp: RegionTimeline.Stamp?, snapshot: Snapshot?
    ) {
        locked {
            defer {
                noteMove(ContinuousClock.now)
                drawnThrough = max(drawnThrough, frame)
                prune()
            }
            let stamp = entries[frame]?.stamp
            let pts = entries[frame]?.ptsNs
            guard frameAccurate else {
                // The scanner passing this frame without results (a live frame dropped to stay live) ends the wait.
                let deadline = Date(timeIntervalSinceNow: liveBound)
                while drawn, entries[frame]?.results == nil, scannedThrough < frame, !ended {
                    if !condition.wait(until: deadline) { break }
                }
                let own = entries[frame]?.results
                let due = appearedSinceDrawn
                appearedSinceDrawn = nil
                let names = namedSinceDrawn
                namedSinceDrawn = []
                return (
                    own ?? latest, stamp,
                    due.map { Snapshot(frame: frame, ptsNs: pts, tracks: $0.tracks, names: names) }
                )
            }
            let deadline = Date(timeIntervalSinceNow: timeout)
            // The scanner passing this frame without results (it never reached it) ends the wait too.
            while entries[frame]?.results == nil && scannedThrough < frame && !ended {
                if !condition.wait(until: deadline) { return (nil, stamp, nil) }
            }
            let e = entries[frame]
            let due = Snapshot(frame: frame, ptsNs: pts, tracks: e?.appeared ?? [], names: e?.named ?? [])
            return (e?.results ?? [], stamp, due.isEmpty ? nil : due)
        }
    }

    /// The overlay branch let frame `frame` go undrawn (nobody watches): its entry need not wait for the overlay.
    func notDrawn(_ frame: Int) {
        locked {
            drawnThrough = max(drawnThrough, frame)
            prune()
        }
    }

    /// No more results will come (end of stream, error, shutdown): release a waiting overlay.
    func end() {
        locked {
            ended = true
            condition.broadcast()
        }
    }

    /// After the run (no branch moves any more): every frame that reached the tee and was never scanned counts as
    /// dropped, so that frames in = scanned + dropped holds exactly. Safe to call more than once.
    func settle() {
        locked {
            for (_, e) in entries where !e.scanned { skipped += 1 }
            entries = [:]
            lowest = next
        }
    }

    /// Entries still held (the tests check that it stays small).
    var count: Int { locked { entries.count } }

    /// Frames that reached the tee and frames the scanner skipped, so far.
    var frameCounts: (admitted: Int, skipped: Int) { locked { (next, skipped) } }

    private func prune() {
        let done = drawn ? min(scannedThrough, drawnThrough) : scannedThrough
        while lowest <= done {
            if let e = entries.removeValue(forKey: lowest), !e.scanned { skipped += 1 }
            lowest += 1
        }
    }
}
