import Foundation

/// What one instance (a run, a service instance) gives the brokers: its name, its status, and an answer to a
/// control command from `.../control/set`.
public struct PublishSource: Sendable {
    public var instance: String
    public var status: @Sendable () -> JSONValue
    /// Nil once the instance is gone.
    public var state: @Sendable () -> InstanceState?
    public var control: @Sendable (String) -> JSONValue

    public init(
        instance: String, status: @escaping @Sendable () -> JSONValue,
        state: @escaping @Sendable () -> InstanceState?,
        control: @escaping @Sendable (String) -> JSONValue
    ) {
        self.instance = instance
        self.status = status
        self.state = state
        self.control = control
    }

    /// A controller's: its progress as status, `--control` commands answered `{"command", "ok"|"error"}`.
    public static func controller(_ instance: String, _ controller: ScanController) -> PublishSource {
        PublishSource(
            instance: instance,
            status: { [weak controller] in
                guard let controller else { return .null }
                let p = controller.progress
                var fields: [(String, JSONValue)] = [
                    ("state", .string(controller.instanceState.rawValue)),
                    ("frames", .int(p?.frames ?? 0)),
                    ("codes", .int(p?.codes ?? 0)),
                ]
                if let rate = controller.cycles.counts.readRate { fields.append(("read_rate", .double(rate))) }
                return .object(fields)
            },
            state: { [weak controller] in controller?.instanceState },
            control: { [weak controller] command in controller?.answer(command) ?? .null })
    }
}

extension ScanController {
    /// A control command's answer as the service and the broker give it.
    public func answer(_ command: String) -> JSONValue {
        do {
            try perform(command)
            return .object([("command", .string(command)), ("ok", .bool(true))])
        } catch {
            return .object([("command", .string(command)), ("ok", .bool(false)), ("error", .string("\(error)"))])
        }
    }
}

/// A sink's counts, for `/metrics` and the summary.
public struct PublishCounters: Sendable {
    public var connected = false
    public var depth = 0
    public var published = 0
    public var spooled = 0
    public var dropped: [String: Int] = [:]
}

protocol PublishSink: AnyObject, Sendable {
    var target: PublishTarget { get }
    /// Events on their way to the spool, and the counts.
    var queue: SinkQueue { get }
    /// Signalled when the sink's thread has ended.
    var finished: DispatchSemaphore { get }
    func start()
    func register(_ source: PublishSource)
    func unregister(_ instance: String)
}

extension PublishSink {
    var counters: Locked<PublishCounters> { queue.counters }

    func enqueue(instance: String, seq: Int, payload: String) {
        queue.enqueue(instance: instance, seq: seq, payload: payload)
    }

    /// Sends what the broker takes within `timeout` seconds, then ends the sink's thread. Blocks.
    func stop(timeout: Double) {
        queue.requestStop()
        _ = finished.wait(timeout: .now() + timeout + 2)
    }
}

/// Where `--publish` settings go: the brokers, the node's name, the spool.
public struct PublishSettings: Sendable, Equatable {
    public var targets: [PublishTarget] = []
    /// The node's name in topics and ids (default: the host name).
    public var node: String? = nil
    /// The spool's folder (default: `spool` in the state folder).
    public var spool: String? = nil
    public var spoolMaxBytes = 256 << 20
    public init() {}
}

/// The process's brokers: one sink per `--publish` URL, shared by every instance, each with its own spool and
/// thread. A pipeline never waits on a broker: an event is stamped and queued in memory, and the sink's thread
/// writes it to the spool and sends it.
public final class Publisher: Sendable {
    let sinks: [any PublishSink]
    public let node: String
    /// This life of the process, in every event's id.
    public let life: String
    let spoolFolder: String
    let lastSeq: [String: Int]
    /// Where broker events go; until it is set (the first connection is tried before), they wait here.
    let report = Locked<(body: (@Sendable (Event) -> Void)?, early: [Event])>((nil, []))

    /// Opens the spools (a folder that cannot be written is an error now, before any pipeline starts) and starts
    /// the sinks; a broker that refuses the user is an error too; one that cannot be reached is a warning: events
    /// wait in the spool.
    /// - Parameter stateFolder: where the spool goes when `settings.spool` is not given.
    /// - Throws: ``BarscopeError/badInput`` naming the folder or the broker and user.
    public init(_ settings: PublishSettings, stateFolder: String) throws {
        node = settings.node ?? ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "node"
        life = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        spoolFolder = settings.spool ?? (stateFolder as NSString).appendingPathComponent("spool")
        var sinks: [any PublishSink] = []
        var last: [String: Int] = [:]
        let relay = report
        for target in settings.targets {
            let spool = try Spool(
                folder: (spoolFolder as NSString).appendingPathComponent(target.folderName),
                maxBytes: settings.spoolMaxBytes)
            for (i, s) in spool.lastSeq { last[i] = max(last[i] ?? 0, s) }
            let onEvent: @Sendable (Event) -> Void = { e in
                let body = relay.withLock { r -> (@Sendable (Event) -> Void)? in
                    if r.body == nil { r.early.append(e) }
                    return r.body
                }
                body?(e)
            }
            switch target.kind {
            case .mqtt, .mqtts: sinks.append(MQTTSink(target: target, node: node, spool: spool, report: onEvent))
            case .kafka: sinks.append(try KafkaSink(target: target, node: node, spool: spool, report: onEvent))
            }
        }
        self.sinks = sinks
        lastSeq = last
        for s in sinks { s.start() }
        for case let s as MQTTSink in sinks {
            if case .refused(let line) = s.firstConnection(within: 3) {
                stop(timeout: 0)
                throw BarscopeError.badInput(line)
            }
        }
    }

    /// Where broker events (`broker-connected`, `broker-disconnected`, warnings) go.
    public func onEvent(_ body: @escaping @Sendable (Event) -> Void) {
        let early = report.withLock { r -> [Event] in
            r.body = body
            defer { r.early.removeAll() }
            return r.early
        }
        for e in early { body(e) }
    }

    /// An instance's channel: stamps its events (`seq` without gaps, continuing after what the spool held, and a
    /// globally unique `id`) and queues them for every sink.
    public func channel(_ source: PublishSource) -> PublishChannel {
        for s in sinks { s.register(source) }
        let seqFile = (spoolFolder as NSString).appendingPathComponent("seq-\(source.instance)")
        let stored = FileContents.text(atPath: seqFile).flatMap {
            Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let channel = PublishChannel(
            publisher: self, instance: source.instance, next: max(stored ?? 0, lastSeq[source.instance] ?? 0) + 1,
            seqFile: seqFile)
        channels.withLock { $0[source.instance] = WeakChannel(channel: channel) }
        return channel
    }

    public func unregister(_ instance: String) {
        for s in sinks { s.unregister(instance) }
        channels.withLock { $0.removeValue(forKey: instance) }?.channel?.save()
    }

    /// Each instance's channel, so that a stop saves where its seq stands. Weak: a channel holds its publisher, and
    /// a strong map back was a cycle that kept both (and the sinks and spools) once the instance let go of it without
    /// `unregister` (LeakSanitizer). The instance owns its channel.
    private let channels = Locked<[String: WeakChannel]>([:])
    private struct WeakChannel {
        weak var channel: PublishChannel?
    }

    func enqueue(instance: String, seq: Int, payload: String) {
        for s in sinks { s.enqueue(instance: instance, seq: seq, payload: payload) }
    }

    /// Sends what the brokers take within `timeout` seconds (the rest stays spooled for the next start). Blocks.
    public func stop(timeout: Double = 3) {
        for c in channels.withLock({ $0.values.compactMap(\.channel) }) { c.save() }
        for s in sinks { s.stop(timeout: timeout) }
    }

    /// Each sink's URL (without password) and counts.
    public var counters: [(sink: String, counts: PublishCounters)] {
        sinks.map { ($0.target.description, $0.counters.withLock { $0 }) }
    }
}

/// One instance's events on their way to the brokers.
public final class PublishChannel: Sendable {
    private let publisher: Publisher
    public let instance: String
    private let state: Locked<(next: Int, savedAt: ContinuousClock.Instant)>
    private let seqFile: String

    init(publisher: Publisher, instance: String, next: Int, seqFile: String) {
        self.publisher = publisher
        self.instance = instance
        self.seqFile = seqFile
        state = Locked((next, ContinuousClock.now - .seconds(10)))
    }

    /// The event as its JSON line with `id` and `seq`, queued for every sink. Called by one thread (the controller's
    /// delivery thread), which writes the same line to its events file: the file and the brokers have one order.
    @discardableResult
    public func publish(_ event: Event) -> String {
        let (line, due) = state.withLock { s -> (String, Int?) in
            let seq = s.next
            s.next += 1
            let id = "\(publisher.node)/\(instance)/\(publisher.life)/\(seq)"
            guard case .object(var fields) = event.json else { return (event.jsonLine, nil) }
            fields.insert(contentsOf: [("id", .string(id)), ("seq", .int(seq))], at: min(1, fields.count))
            let line = JSONValue.object(fields).encoded()
            publisher.enqueue(instance: instance, seq: seq, payload: line)
            // The next seq survives a restart (the spool keeps the rest); at most once a second, and at the stop.
            guard ContinuousClock.now - s.savedAt > .seconds(1) else { return (line, nil) }
            s.savedAt = ContinuousClock.now
            return (line, seq)
        }
        // Written after the numbering's lock is let go: a slow disk never holds up the next event's number.
        if let due { write(due) }
        return line
    }

    /// Saves where the seq stands (the stop; a kill -9 leaves at most a second, which the spool still holds).
    func save() { write(state.withLock { $0.next - 1 }) }

    /// The newest seq saved: a save that lost the race to a newer one writes nothing.
    private let saved = Locked(Int.min)

    private func write(_ seq: Int) {
        saved.withLock { newest in
            guard seq > newest else { return }
            let tmp = seqFile + ".tmp"
            if FileManager.default.createFile(atPath: tmp, contents: Data("\(seq)\n".utf8)) {
                _ = rename(tmp, seqFile)
                newest = seq
            }
        }
    }
}
