/// Gives each code one stable identity across frames, as the AVFoundation tutorial keeps its codes in a table
/// keyed by content; here the key is content *and* position, so two identical labels in view are two tracks.
///
/// Not thread-safe: one tracker per scan stream, fed frames in order.
public final class Tracker {
    public struct Track: Sendable {
        public let id: Int
        public let type: String
        public let data: String
        public var center: Point
        public var diagonal: Double
        public var lastFrame: Int
        public var framesSeen: Int
    }

    /// A track not seen for this many frames is lost.
    public let lostAfterFrames: Int
    public private(set) var tracks: [Track] = []
    public private(set) var tracksStarted = 0

    public init(lostAfterFrames: Int = 15) { self.lostAfterFrames = max(1, lostAfterFrames) }

    /// Matches one frame's detections to tracks.
    /// - Returns: the track id of each detection (same order) and the `appeared`/`lost` events this frame causes.
    public func update(frame: Int, ptsNs: UInt64?, detections: [Detection]) -> (ids: [Int], events: [Event]) {
        var ids: [Int] = []
        var events: [Event] = []
        var matched = Set<Int>()  // indices into tracks
        for d in detections {
            let diag = Double(d.bounds.width * d.bounds.width + d.bounds.height * d.bounds.height).squareRoot()
            var best: (index: Int, distance: Double)? = nil
            for (i, t) in tracks.enumerated() where !matched.contains(i) && t.type == d.type && t.data == d.data {
                let dist = t.center.distance(to: d.center)
                // Codes move; allow a few diagonals of travel per gap in frames.
                let reach = max(t.diagonal, diag) * Double(2 + min(frame - t.lastFrame, 10))
                if dist <= reach, best == nil || dist < best!.distance { best = (i, dist) }
            }
            if let b = best {
                matched.insert(b.index)
                tracks[b.index].center = d.center
                tracks[b.index].diagonal = diag
                tracks[b.index].lastFrame = frame
                tracks[b.index].framesSeen += 1
                ids.append(tracks[b.index].id)
            } else {
                tracksStarted += 1
                let t = Track(
                    id: tracksStarted, type: d.type, data: d.data, center: d.center, diagonal: diag,
                    lastFrame: frame, framesSeen: 1)
                tracks.append(t)
                matched.insert(tracks.count - 1)
                ids.append(t.id)
                events.append(.appeared(frame: frame, ptsNs: ptsNs, detection: d, track: t.id))
            }
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
        defer { tracks.removeAll() }
        return tracks.map {
            .lost(frame: frame, ptsNs: ptsNs, track: $0.id, type: $0.type, data: $0.data, framesSeen: $0.framesSeen)
        }
    }
}
