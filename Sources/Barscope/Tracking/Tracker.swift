/// Gives each code one stable identity across frames, as the AVFoundation tutorial keeps its codes in a table
/// keyed by content; here the key is content *and* position, so two identical labels in view are two tracks.
///
/// A read becomes a track only once it is confirmed (Dynamsoft's cross-frame filter is the model): a 2D code (its
/// error correction is its margin) or a 1D read that several scan lines, or both decoders, agreed on stands at once;
/// any other 1D read is held until the same text is read at the same place again (within `Confirmation.window`
/// frames), and its held reads are then released with their own frames. A blurred EAN or UPC read with a valid check
/// digit but wrong digits seldom repeats itself, and such a read that disagrees with a track at its place (same
/// symbology, another text) is dropped while that track lives; so is one several scan lines agreed on, when the
/// track's own text is read there in the same frame. An EAN or UPC text the decoders' votes at its place reject
/// (`TextVotes`: zxing-cpp disputed it more often than it agreed with it, or ZBar read another text there on more
/// lines at once) is dropped too. Held and dropped reads are counted.
///
/// Not thread-safe: one tracker per scan stream, fed frames in order.
public final class Tracker {
    public struct Track: Sendable {
        public let id: Int
        public let type: String
        public let data: String
        public var center: Point
        public var diagonal: Double
        /// Where the code was last read (its box).
        public var bounds: PixelRect
        public var lastFrame: Int
        public var framesSeen: Int
    }

    /// When a read is reported.
    public struct Confirmation: Sendable, Equatable {
        /// Frames a low-margin read must be read in, at the same place, before it is reported (1: every read at once).
        public var frames: Int
        /// How many frames apart those reads may be (as long as a track lasts unseen: a code read in every tenth
        /// frame is still one code).
        public var window: Int
        public init(frames: Int = 2, window: Int = 15) {
            self.frames = max(1, frames)
            self.window = max(1, window)
        }
        public static let none = Confirmation(frames: 1)
    }

    /// A read held until it is confirmed: where and when it was read.
    public struct Held: Sendable {
        public let frame: Int
        public let ptsNs: UInt64?
        public let detection: Detection
        public let track: Int
    }

    /// A low-margin read not yet confirmed, and its reads so far.
    private struct Candidate {
        let type: String
        let data: String
        var center: Point
        var diagonal: Double
        var lastFrame: Int
        var frames: Int
        var held: [(frame: Int, ptsNs: UInt64?, detection: Detection)]
    }

    /// A track not seen for this many frames is lost.
    public let lostAfterFrames: Int
    public let confirmation: Confirmation
    public private(set) var tracks: [Track] = []
    public private(set) var tracksStarted = 0
    private var candidates: [Candidate] = []
    /// The held reads of the codes the last `update` confirmed, in frame order, with their new track: they are
    /// reported late (`--every-frame` gives each its own frame), so that confirming costs no frame of a code.
    public private(set) var released: [Held] = []
    /// Reads not reported: held and never confirmed, or disagreeing with a track at their place.
    public private(set) var unconfirmed = 0
    public private(set) var disagreeing = 0
    /// What the decoders said of each EAN and UPC text at its place over the recent frames.
    private var votes: TextVotes

    public init(lostAfterFrames: Int = 15, confirmation: Confirmation = Confirmation()) {
        self.lostAfterFrames = max(1, lostAfterFrames)
        self.confirmation = confirmation
        votes = TextVotes(window: self.lostAfterFrames)
    }

    /// Whether a read stands on its own: error correction (2D codes), several scan lines that agreed, or both
    /// decoders that agreed.
    static func standsAlone(_ d: Detection) -> Bool {
        ZBarScanner.isTwoDimensional(name: d.type) || d.quality >= 2 || d.engine == "both"
    }

    /// Matches one frame's detections to tracks.
    /// - Returns: the track id of each detection (same order; nil for a read not reported: held for confirmation,
    ///   or disagreeing with a track at its place) and the `appeared`/`lost` events this frame causes.
    public func update(frame: Int, ptsNs: UInt64?, detections: [Detection], disputed: [Detection] = []) -> (
        ids: [Int?], events: [Event]
    ) {
        var ids: [Int?] = []
        var events: [Event] = []
        var matched = Set<Int>()  // indices into tracks
        released = []
        // Candidates too old to be confirmed any more.
        candidates.removeAll { c in
            guard frame - c.lastFrame > confirmation.window else { return false }
            unconfirmed += c.frames
            return true
        }
        votes.count(frame: frame, reads: detections, disputed: disputed)
        for d in detections {
            let diag = d.bounds.diagonal
            // Codes move; allow a few diagonals of travel per gap in frames.
            func reach(_ diagonal: Double, _ last: Int) -> Double {
                max(diagonal, diag) * Double(2 + min(frame - last, 10))
            }
            // An EAN or UPC text the decoders' votes at its place reject (`TextVotes`).
            if votes.reject(d, frame: frame, reach: reach) {
                disagreeing += 1
                ids.append(nil)
                continue
            }
            var best: (index: Int, distance: Double)? = nil
            for (i, t) in tracks.enumerated() where !matched.contains(i) && t.type == d.type && t.data == d.data {
                let dist = t.center.distance(to: d.center)
                if dist <= reach(t.diagonal, t.lastFrame), best == nil || dist < best!.distance { best = (i, dist) }
            }
            if let b = best {
                matched.insert(b.index)
                tracks[b.index].center = d.center
                tracks[b.index].diagonal = diag
                tracks[b.index].bounds = d.bounds
                tracks[b.index].lastFrame = frame
                tracks[b.index].framesSeen += 1
                ids.append(tracks[b.index].id)
                continue
            }
            // A read of another text of the same symbology where a track is (on its last place: two labels side by
            // side or stacked lie apart) is a misread of that code, not a new one:
            // a low-margin read while the track lives; a read several of ZBar's scan lines agreed on when the
            // track's own text is read there in this same frame (on a blurred frame neighbouring lines see the same
            // blur and agree on the same wrong digits, so their number is no margin against the other lines' read;
            // a label swapped for another, or a code whose content changes in place, is not read there any more).
            // Only a second decoder's agreement, or a 2D code's error correction, outweighs the track.
            var alone = Self.standsAlone(d)
            let independent = ZBarScanner.isTwoDimensional(name: d.type) || d.engine == "both"
            // (On the code: within half its size, and the middle of either inside the other's box. Stacked labels of
            // one symbology, a tall one's middle within half its diagonal of a short one's, are two codes: seen, an
            // 8-digit I2/5 above a 10-digit one dropped in every frame as a misread of it.)
            func contradicts(_ t: Track) -> Bool {
                t.type == d.type && t.data != d.data && t.center.distance(to: d.center) <= 0.5 * max(t.diagonal, diag)
                    && (t.bounds.contains(d.center) || d.bounds.contains(t.center))
            }
            func readHereNow(_ t: Track) -> Bool {
                detections.contains {
                    $0.type == t.type && $0.data == t.data
                        && $0.center.distance(to: d.center) <= 0.5 * max(t.diagonal, diag)
                }
            }
            if confirmation.frames > 1, !independent, tracks.contains(where: contradicts) {
                if !alone || tracks.contains(where: { contradicts($0) && readHereNow($0) }) {
                    disagreeing += 1
                    ids.append(nil)
                    continue
                }
                // Where a code was read a frame ago and is not read now, a strong read of another text is a new
                // code only once it is read again (a code whose content changes in place), and is held as a
                // low-margin read is (released with its own frame when confirmed).
                if tracks.contains(where: { contradicts($0) && frame - $0.lastFrame <= 1 }) { alone = false }
            }
            var seen = 1
            var first: (frame: Int, ptsNs: UInt64?, detection: Detection) = (frame, ptsNs, d)
            var earlier: [(frame: Int, ptsNs: UInt64?, detection: Detection)] = []
            let same = candidates.firstIndex { c in
                c.type == d.type && c.data == d.data
                    && c.center.distance(to: d.center) <= reach(c.diagonal, c.lastFrame)
            }
            if alone, let i = same {
                // A strong read of a code held so far: its held reads go out with it.
                seen += candidates[i].frames
                earlier = candidates[i].held
                candidates.remove(at: i)
            } else if !alone, confirmation.frames > 1 {
                if let i = same {
                    candidates[i].frames += 1
                    candidates[i].center = d.center
                    candidates[i].diagonal = diag
                    candidates[i].lastFrame = frame
                    seen = candidates[i].frames
                    if seen >= confirmation.frames {
                        earlier = candidates[i].held
                        candidates.remove(at: i)
                    } else {
                        candidates[i].held.append((frame, ptsNs, d))
                    }
                } else {
                    candidates.append(
                        Candidate(
                            type: d.type, data: d.data, center: d.center, diagonal: diag, lastFrame: frame, frames: 1,
                            held: [(frame, ptsNs, d)]))
                }
                if seen < confirmation.frames {
                    ids.append(nil)
                    continue
                }
            }
            tracksStarted += 1
            let t = Track(
                id: tracksStarted, type: d.type, data: d.data, center: d.center, diagonal: diag, bounds: d.bounds,
                lastFrame: frame, framesSeen: seen)
            tracks.append(t)
            matched.insert(tracks.count - 1)
            ids.append(t.id)
            // The code appeared where and when it was first read, though reported now.
            if let h = earlier.first { first = h }
            released += earlier.map { Held(frame: $0.frame, ptsNs: $0.ptsNs, detection: $0.detection, track: t.id) }
            events.append(.appeared(frame: first.frame, ptsNs: first.ptsNs, detection: first.detection, track: t.id))
        }
        tracks.removeAll { t in
            guard frame - t.lastFrame > lostAfterFrames else { return false }
            events.append(
                .lost(
                    frame: frame, ptsNs: ptsNs, track: t.id, type: t.type, data: t.data,
                    framesSeen: t.framesSeen))
            return true
        }
        return (ids, events)
    }

    /// Ends every open track (end of stream).
    public func finish(frame: Int, ptsNs: UInt64?) -> [Event] {
        defer {
            tracks.removeAll()
            votes = TextVotes(window: lostAfterFrames)
            unconfirmed += candidates.reduce(0) { $0 + $1.frames }
            candidates.removeAll()
        }
        return tracks.map {
            .lost(frame: frame, ptsNs: ptsNs, track: $0.id, type: $0.type, data: $0.data, framesSeen: $0.framesSeen)
        }
    }
}
