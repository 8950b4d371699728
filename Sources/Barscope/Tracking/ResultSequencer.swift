/// Results come from the scanning workers in any order and leave in frame order, through the tracker (one stable
/// identity per code) and the duplicate filter: the one place that does this, for the tool's runs and for the
/// element. Not thread-safe: its owner keeps it behind a lock (the element), or lets one thread at a time use it (a
/// run's scan stage: the scanning pool's delivering role), and delivers what `add` returns.
public struct ResultSequencer<Payload> {
    /// One scanned frame.
    public struct Scanned {
        /// Order of submission: 0, 1, 2 ... without gaps.
        public var sequence: Int
        /// The frame's number; negative: numbered in the order frames leave.
        public var frame: Int
        public var ptsNs: UInt64?
        public var detections: [Detection]
        /// Reads the decoders disputed in this frame (`BarcodeReader.takeDisputes`), in full-frame pixels.
        public var disputed: [Detection]
        /// What the owner needs when the frame leaves (the element: its buffer).
        public var payload: Payload
        public init(
            sequence: Int, frame: Int, ptsNs: UInt64?, detections: [Detection], disputed: [Detection] = [],
            payload: Payload
        ) {
            self.sequence = sequence
            self.frame = frame
            self.ptsNs = ptsNs
            self.detections = detections
            self.disputed = disputed
            self.payload = payload
        }
    }

    /// One frame leaving, in order.
    public struct Delivered {
        public var frame: Int
        public var ptsNs: UInt64?
        public var detections: [Detection]
        /// Each detection's track.
        public var tracks: [Int]
        /// The events to report: `detection`s (every frame) or the tracker's `appeared`/`lost` that the duplicate
        /// filter let through.
        public var events: [Event]
        /// Tracks that started on this frame.
        public var appeared: [Int]
        public var payload: Payload
    }

    private var next = 0
    private var waiting: [Int: Scanned] = [:]
    private let tracker: Tracker
    private var duplicates: DuplicateFilter
    private let everyFrame: Bool
    public private(set) var last: (frame: Int, ptsNs: UInt64?) = (0, nil)
    public private(set) var delivered = 0

    public init(
        lostAfterFrames: Int, duplicates: DuplicatePolicy = .everyTrack, everyFrame: Bool = false,
        confirmation: Tracker.Confirmation = Tracker.Confirmation()
    ) {
        tracker = Tracker(lostAfterFrames: lostAfterFrames, confirmation: confirmation)
        self.duplicates = DuplicateFilter(policy: duplicates)
        self.everyFrame = everyFrame
    }

    /// Codes seen so far (tracks started).
    public var tracksStarted: Int { tracker.tracksStarted }
    /// Reads never reported: held for a confirmation that did not come, or disagreeing with a track at their place.
    public var unreported: (unconfirmed: Int, disagreeing: Int) { (tracker.unconfirmed, tracker.disagreeing) }

    /// Adds one frame's results; returns every frame now ready, in order.
    public mutating func add(_ s: Scanned) -> [Delivered] {
        waiting[s.sequence] = s
        var out: [Delivered] = []
        while let r = waiting.removeValue(forKey: next) {
            next += 1
            out.append(deliver(r))
        }
        return out
    }

    /// A frame its caller already puts in order (the scanning pool's lanes deliver in order): delivered at once.
    public mutating func addInOrder(_ s: Scanned) -> Delivered { deliver(s) }

    /// A frame that takes no sequence number (the element's synchronous path) goes through at once, after every
    /// frame submitted before it.
    public mutating func addNow(
        frame: Int, ptsNs: UInt64?, detections: [Detection], disputed: [Detection] = [], payload: Payload
    ) -> Delivered {
        deliver(
            Scanned(
                sequence: next, frame: frame, ptsNs: ptsNs, detections: detections, disputed: disputed,
                payload: payload))
    }

    private mutating func deliver(_ scanned: Scanned) -> Delivered {
        var r = scanned
        if r.frame < 0 { r.frame = delivered }
        delivered += 1
        last = (r.frame, r.ptsNs)
        let (found, trackEvents) = tracker.update(
            frame: r.frame, ptsNs: r.ptsNs, detections: r.detections, disputed: r.disputed)
        // Reads not (yet) confirmed go no further: no event, no box, no cycle result, no snapshot.
        r.detections = zip(r.detections, found).compactMap { $1 == nil ? nil : $0 }
        let ids = found.compactMap { $0 }
        let appeared = trackEvents.compactMap { e -> Int? in
            if case .appeared(_, _, _, let id) = e { return id }
            return nil
        }
        var events: [Event]
        if everyFrame {
            // Reads held for confirmation go out first, each with its own frame (earlier than this one).
            events = tracker.released.sorted { $0.frame < $1.frame }.map {
                .detection(frame: $0.frame, ptsNs: $0.ptsNs, detection: $0.detection, track: $0.track)
            }
            events += zip(r.detections, ids).map {
                .detection(frame: r.frame, ptsNs: r.ptsNs, detection: $0.0, track: $0.1)
            }
        } else {
            events = []
            for e in trackEvents where duplicates.admit(e) { events.append(e) }
        }
        return Delivered(
            frame: r.frame, ptsNs: r.ptsNs, detections: r.detections, tracks: ids, events: events, appeared: appeared,
            payload: r.payload)
    }

    /// After the last frame: the open tracks close.
    public mutating func finish() -> [Event] {
        let closing = tracker.finish(frame: last.frame, ptsNs: last.ptsNs)
        guard !everyFrame else { return [] }
        return closing.filter { duplicates.admit($0) }
    }
}

extension ResultSequencer.Scanned: Sendable where Payload: Sendable {}
