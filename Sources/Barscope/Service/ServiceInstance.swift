import Foundation
import Synchronization

/// One named pipeline the service runs: its controller (the one supervisor, restarting on errors), the newest
/// annotated frame for watchers, its recent events numbered for Server-Sent Events, and its counters.
///
/// Sendable: the controller and the tap are thread-safe; everything else is behind locks or set once.
public final class ServiceInstance: @unchecked Sendable {
    public let id: String
    public let pipeline: String
    /// The `SECTION.KEY` overrides it was started with, in order (what the state folder keeps).
    public let overrides: [(String, String)]
    public let controller: ScanController
    public let preview = PreviewTap()
    public let startedAt = Date()
    public let recording: String?
    /// Where `--snapshots` writes (`snapshots.folder`): the only folder the snapshot route reads.
    public let snapshotFolder: String?
    let events: EventRing
    /// `[events] path`: every event line, as the ring holds it, also goes to this file.
    private let eventFile: EventWriter?
    /// The sightings index's writer for this instance (`serve --index`, or the state folder's).
    let index: SightingRecorder?
    private let counters = Locked(Counters())
    /// Called (any thread) when events arrive, for the streams watching them.
    private let notify: @Sendable (ServiceInstance) -> Void

    struct Counters {
        var codes: [String: Int] = [:]
        /// `--every-frame`: tracks already counted in this run (track numbers start again in each run).
        var seenTracks = Set<Int>()
        var restarts = 0
        var lastError: String? = nil
    }

    private final class Box: @unchecked Sendable {
        // Sendable: `instance` is set once, in init, before the controller is started or the publisher has the
        // source; only read after.
        weak var instance: ServiceInstance?
    }

    init(
        id: String, pipeline: String, overrides: [(String, String)], configuration: RunConfiguration,
        eventMemory: Int = 1000, publisher: Publisher? = nil, eventFile: EventWriter? = nil,
        index: SightingRecorder? = nil, notify: @escaping @Sendable (ServiceInstance) -> Void
    ) {
        self.eventFile = eventFile
        self.index = index
        self.id = id
        self.pipeline = pipeline
        self.overrides = overrides
        self.notify = notify
        events = EventRing(capacity: eventMemory)
        var c = configuration
        c.preview = preview
        recording = c.recording.map { $0.segmentSeconds == nil ? $0.path : $0.segmentPattern }
        snapshotFolder = c.snapshotFolder
        let box = Box()
        // A service restarts what fails (a stalled stream, a camera that went away), for as long as it runs; a
        // mistake in what was asked (a missing file, a wrong password) fails at once.
        controller = ScanController(
            name: id, configuration: c, restart: .onError, backoff: ReconnectPolicy(maxAttempts: nil),
            observer: { box.instance?.observe($0) })
        box.instance = self
        if let publisher {
            let source = PublishSource(
                instance: id, status: { [weak box] in box?.instance?.status ?? .null },
                state: { [weak box] in box?.instance?.state },
                control: { [weak box] command in box?.instance?.controller.answer(command) ?? .null })
            channel.withLock { $0 = publisher.channel(source) }
        }
    }

    /// Stamps and queues this instance's events for the brokers (`serve --publish`).
    private let channel = Locked<PublishChannel?>(nil)

    private func observe(_ event: Event) {
        counters.withLock { k in
            switch event {
            case .appeared(_, _, let d, _): k.codes[d.type, default: 0] += 1
            case .detection(_, _, let d, let track):
                // --every-frame: a code counts once, on its track's first frame (tracks are numbered from 1 per run).
                if let track, k.seenTracks.insert(track).inserted { k.codes[d.type, default: 0] += 1 }
            case .reconnecting:
                k.restarts += 1
                k.seenTracks.removeAll()
            case .error(let m, _): k.lastError = m
            default: break
            }
        }
        let line = channel.load()?.publish(event) ?? event.jsonLine
        events.append(line)
        eventFile?.write(line: line)
        index?.take(event)
        notify(self)
    }

    /// Stops it: end of stream first (the recording is finished), waiting at most `timeout` seconds. Blocks.
    /// - Returns: false when it had not ended in time.
    func stop(timeout: Double = 30) -> Bool { controller.stop(timeout: timeout) }

    /// `stopped` once a stop was asked for (DELETE, or a `stop` control command on any channel: each a request to the
    /// controller), `completed` at its stream's own end.
    public var state: InstanceState { controller.instanceState }

    public var ended: Bool {
        switch controller.state {
        case .stopped, .failed: return true
        default: return false
        }
    }

    /// Frames scanned, dropped and in over every run, codes seen by symbology, restarts.
    public var totals: (frames: Int, dropped: Int, admitted: Int, codes: [String: Int], restarts: Int) {
        let t = controller.totals
        return counters.withLock { k in (t.frames, t.dropped, t.admitted, k.codes.unshared, k.restarts) }
    }

    /// The status object of the API.
    public var status: JSONValue {
        let p = controller.progress
        let t = totals
        let error: String? = {
            if case .failed(let why) = controller.state { return why }
            return counters.withLock { $0.lastError }
        }()
        var latency: JSONValue = .null
        if let l = p?.latencyMs {
            latency = .object([
                ("p50", .double((l.p50 * 10).rounded() / 10)), ("p95", .double((l.p95 * 10).rounded() / 10)),
            ])
        }
        var fields: [(String, JSONValue)] = [
            ("id", .string(id)), ("pipeline", .string(pipeline)), ("state", .string(state.rawValue)),
            // Frames in (at the tee) = frames (scanned) + frames_dropped + those in hand (scan_waiting and in flight).
            ("frames_in", .int(t.admitted)), ("frames", .int(t.frames)), ("frames_dropped", .int(t.dropped)),
            ("scan_waiting", .int(p?.scanWaiting ?? 0)),
            ("scan_share", .double(((p?.scanShare ?? 0) * 1000).rounded() / 1000)),
            ("fps", .double(((p?.framesPerSecond ?? 0) * 10).rounded() / 10)), ("latency_ms", latency),
            ("codes", .int(t.codes.values.reduce(0, +))),
            // The newest event's number (the SSE id): a client compares it with what it received.
            ("events", .int(events.last)), ("restarts", .int(t.restarts)),
            ("error", error.map { .string($0) } ?? .null),
            ("started_at", .string(ISO8601DateFormatter().string(from: startedAt))),
        ]
        // The frame's size and the viewfinder's region in it, in frame pixels as events give coordinates (null
        // region: the whole frame is scanned).
        if let now = controller.viewfinderNow {
            fields.append(
                ("frame_size", .object([("width", .int(now.frame.width)), ("height", .int(now.frame.height))])))
            fields.append(
                (
                    "viewfinder",
                    now.region.map {
                        .object([
                            ("x", .int($0.x)), ("y", .int($0.y)), ("width", .int($0.width)),
                            ("height", .int($0.height)),
                        ])
                    } ?? .null
                ))
        }
        let cycles = controller.cycles.counts
        if let rate = cycles.readRate {
            var c: [(String, JSONValue)] = [("total", .int(cycles.values.reduce(0, +)))]
            for outcome in CycleResult.Outcome.allCases { c.append((outcome.rawValue, .int(cycles[outcome] ?? 0))) }
            c.append(("read_rate", .double((rate * 1000).rounded() / 1000)))
            fields.append(("cycles", .object(c)))
        }
        if let recording { fields.append(("recording", .string(recording))) }
        if snapshotFolder != nil { fields.append(("snapshots", .bool(true))) }
        return .object(fields)
    }
}

/// The newest events of an instance as JSON lines, numbered 1, 2, 3 ... without gaps, so that a client that
/// reconnects with `Last-Event-ID` gets what it missed (while it is still held).
final class EventRing: Sendable {
    private let state: Locked<(next: Int, items: [(Int, String)])>
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        state = Locked((1, []))
    }

    func append(_ line: String) {
        state.withLock { s in
            s.items.append((s.next, line))
            s.next += 1
            if s.items.count > capacity { s.items.removeFirst(s.items.count - capacity) }
        }
    }

    /// Events numbered above `seq`, oldest first.
    func since(_ seq: Int) -> [(Int, String)] {
        state.withLock { s in s.items.filter { $0.0 > seq } }
    }

    var last: Int { state.withLock { $0.next - 1 } }
}
