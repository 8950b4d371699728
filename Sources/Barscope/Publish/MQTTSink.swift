import CMosquitto
import Foundation

/// One MQTT broker (libmosquitto), on a thread of its own: events go to the spool first, then to
/// `PREFIX/NODE/INSTANCE/events` at QoS 1, and leave the spool on the broker's PUBACK. While the broker is away
/// they wait in the spool; a connection is tried again after 1 s, doubling to 30 s, each time with a fresh client
/// (so that what is resent comes from the spool alone). On every connect: `PREFIX/NODE/availability` = `online`
/// (retained; `offline` is the last will), the control topics subscribed again, and each instance's status
/// (retained) on `.../status`, also every 10 s and on change (looked at every second).
///
/// The network is libmosquitto's own loop thread's (`mosquitto_loop_start`). Its callbacks only note what came and
/// wake the sink's thread, which sleeps until an event, a note or its next deadline: no loop looks again and again.
final class MQTTSink: PublishSink, @unchecked Sendable {
    // Sendable: everything below the inbox is touched by the sink's thread only; the inbox, the notes from
    // libmosquitto's thread and the counters are behind locks.
    let target: PublishTarget
    let node: String
    let queue: SinkQueue
    private var spool: Spool { queue.spool }
    private let report: @Sendable (Event) -> Void
    private let registry = Locked<[String: PublishSource]>([:])
    let finished = DispatchSemaphore(value: 0)

    private var mosq: OpaquePointer? = nil
    private var connected = false
    private var connectStarted = ContinuousClock.now
    private var reset: String? = nil
    private var inflight: [Int32: Int] = [:]
    private var sentThrough = 0
    private var backoff = 1.0
    private var nextAttempt = ContinuousClock.now
    private var everConnected = false
    private var warnedUnreachable = false
    private var lastStatus: [String: (state: InstanceState?, at: ContinuousClock.Instant)] = [:]
    /// How the first connection went (the preflight waits for it).
    private let firstOutcome = Locked<FirstOutcome?>(nil)
    private let firstOutcomeCame = DispatchSemaphore(value: 0)
    /// What libmosquitto's thread saw, for the sink's thread.
    private enum Note {
        case connected(Int32)
        case disconnected(Int32)
        case acknowledged(Int32)
        case message(topic: String, payload: String)
    }
    private let notes = Locked<[Note]>([])
    enum FirstOutcome: Equatable {
        case connected
        case refused(String)
        case unreachable(String)
    }

    private var prefix: String { target.path }
    /// Stable for a spool (so a restart is the same client) and different for another process's spool (a broker
    /// lets only one connection have a client id).
    private var clientID: String {
        var hash: UInt32 = 2_166_136_261
        for b in spool.folder.utf8 { hash = (hash ^ UInt32(b)) &* 16_777_619 }
        return "barscope-\(node)-\(String(hash, radix: 36))"
    }

    init(target: PublishTarget, node: String, spool: Spool, report: @escaping @Sendable (Event) -> Void) {
        self.target = target
        self.node = node
        queue = SinkQueue(spool: spool, target: target, report: report)
        self.report = report
        sentThrough = spool.acked
        mosquitto_lib_init()
    }

    func start() {
        // Not kept: the thread's block holds this sink and Foundation keeps a Thread's block for the Thread's life, so
        // a stored Thread was a cycle that kept every sink, its queue and spool (LeakSanitizer). The loop ends on stop.
        let t = Thread { [self] in loop() }
        t.name = "barscope-mqtt"
        t.start()
    }

    /// Waits up to `seconds` for the first connection's outcome.
    func firstConnection(within seconds: Double) -> FirstOutcome? {
        if let o = firstOutcome.withLock({ $0 }) { return o }
        _ = firstOutcomeCame.wait(timeout: .now() + seconds)
        return firstOutcome.withLock { $0 }
    }

    /// The first outcome, kept once; the preflight waiting for it woken.
    private func settleFirst(_ outcome: FirstOutcome) {
        let first = firstOutcome.withLock { o -> Bool in
            defer { o = o ?? outcome }
            return o == nil
        }
        if first { firstOutcomeCame.signal() }
    }

    func register(_ source: PublishSource) {
        registry.withLock { $0[source.instance] = source }
        unsubscribed.withLock { _ = $0.insert(source.instance) }
        queue.poke()
    }

    /// Instances registered while connected, whose control topic the thread subscribes next.
    private let unsubscribed = Locked<Set<String>>([])

    func unregister(_ instance: String) { registry.withLock { $0[instance] = nil } }

    // MARK: the sink's thread

    private func loop() {
        while !queue.stopping { turn() }
        // Stopping: what is queued goes to the spool; what the broker takes in 3 s is sent.
        queue.drain()
        let deadline = ContinuousClock.now + .seconds(3)
        while connected && spool.depth > 0 && ContinuousClock.now < deadline {
            pump()
            queue.idle(max(0, (deadline - ContinuousClock.now).inSeconds))
            handleNotes()
            if reset != nil { break }
        }
        if let mosq, connected {
            // `offline` published, then the disconnect: libmosquitto's thread sends both in order and ends.
            var mid: Int32 = 0
            _ = mosquitto_publish(mosq, &mid, "\(prefix)/\(node)/availability", 7, "offline", 1, true)
            mosquitto_disconnect(mosq)
            mosquitto_loop_stop(mosq, false)
        }
        destroyClient()
        spool.close()
        finished.signal()
    }

    private func turn() {
        queue.drain()
        handleNotes()
        if let why = reset { dropConnection(why) }
        if mosq == nil && ContinuousClock.now >= nextAttempt { connect() }
        guard let mosq else {
            queue.idle(max(0.001, (nextAttempt - ContinuousClock.now).inSeconds))
            return
        }
        if connected {
            for instance in unsubscribed.withLock({ s -> Set<String> in
                defer { s.removeAll() }
                return s
            }) {
                var mid: Int32 = 0
                _ = mosquitto_subscribe(mosq, &mid, "\(prefix)/\(node)/\(instance)/control/set", 1)
            }
            pump()
            publishStatus()
        } else if ContinuousClock.now - connectStarted > .seconds(5) {
            reset = reset ?? "no answer from \(target.hosts[0].host):\(target.hosts[0].port) in 5 s"
        }
        if let why = reset {
            dropConnection(why)
            return
        }
        // Until a note, an event or the next look at the instances' status (or the connect's 5 s).
        queue.idle(connected ? 1 : max(0.001, 5 - (ContinuousClock.now - connectStarted).inSeconds))
    }

    /// What libmosquitto's thread noted, handled on the sink's thread.
    private func handleNotes() {
        for note in notes.withLock({ n -> [Note] in
            defer { n.removeAll() }
            return n
        }) {
            switch note {
            case .connected(let rc): connected(rc)
            case .disconnected(let rc): reset = reset ?? (rc == 0 ? "disconnected" : "the connection was lost")
            case .acknowledged(let mid): acknowledged(mid)
            case .message(let topic, let payload): received(topic: topic, text: payload)
            }
        }
    }

    /// libmosquitto's thread: the note kept, the sink's thread woken.
    private func note(_ note: Note) {
        notes.withLock { $0.append(note) }
        queue.poke()
    }

    private func connect() {
        // A clean session: what goes out comes from the spool, and control commands sent while away are not
        // replayed minutes late (a `cycle start` belongs to the frame it was given on).
        guard let m = mosquitto_new(clientID, true, Unmanaged.passUnretained(self).toOpaque()) else { return }
        mosq = m
        connected = false
        reset = nil
        connectStarted = ContinuousClock.now
        _ = mosquitto_int_option(m, MOSQ_OPT_PROTOCOL_VERSION, Int32(MQTT_PROTOCOL_V311))
        _ = mosquitto_max_inflight_messages_set(m, 0)
        let availability = "\(prefix)/\(node)/availability"
        _ = mosquitto_will_set(m, availability, 7, "offline", 1, true)
        if let user = target.user { _ = mosquitto_username_pw_set(m, user, target.password) }
        if target.kind == .mqtts { _ = mosquitto_int_option(m, MOSQ_OPT_TLS_USE_OS_CERTS, 1) }
        // libmosquitto's thread calls these; they only note (the message's bytes copied: they are freed after).
        mosquitto_connect_callback_set(m) { _, obj, rc in
            guard let obj else { return }
            Unmanaged<MQTTSink>.fromOpaque(obj).takeUnretainedValue().note(.connected(rc))
        }
        mosquitto_disconnect_callback_set(m) { _, obj, rc in
            guard let obj else { return }
            Unmanaged<MQTTSink>.fromOpaque(obj).takeUnretainedValue().note(.disconnected(rc))
        }
        mosquitto_publish_callback_set(m) { _, obj, mid in
            guard let obj else { return }
            Unmanaged<MQTTSink>.fromOpaque(obj).takeUnretainedValue().note(.acknowledged(mid))
        }
        mosquitto_message_callback_set(m) { _, obj, message in
            guard let obj, let m = message?.pointee else { return }
            let payload =
                m.payloadlen > 0
                ? String(decoding: UnsafeRawBufferPointer(start: m.payload, count: Int(m.payloadlen)), as: UTF8.self)
                : ""
            Unmanaged<MQTTSink>.fromOpaque(obj).takeUnretainedValue().note(
                .message(topic: String(cString: m.topic), payload: payload))
        }
        let h = target.hosts[0]
        var rc = mosquitto_connect_async(m, h.host, Int32(h.port), 30)
        // The network from here on is libmosquitto's own thread's (it never reconnects by itself: a lost
        // connection is a fresh client, made here, after the backoff).
        if rc == MOSQ_ERR_SUCCESS.rawValue { rc = mosquitto_loop_start(m) }
        if rc != MOSQ_ERR_SUCCESS.rawValue {
            let why =
                rc == MOSQ_ERR_ERRNO.rawValue
                ? String(cString: strerror(errno)) : String(cString: mosquitto_strerror(rc))
            reset = "cannot reach \(h.host):\(h.port) (\(why))"
            dropConnection(reset!)
        }
    }

    private func connected(_ rc: Int32) {
        guard rc == 0 else {
            let why = String(cString: mosquitto_connack_string(rc))
            // 4: bad user name or password; 5: not authorised.
            if rc == 4 || rc == 5 {
                let who = target.user.map { "user '\($0)'" } ?? "an anonymous client"
                let line = "\(target): the broker refused \(who) (\(why))"
                settleFirst(.refused(line))
                reset = line
            } else {
                reset = "the broker refused the connection (\(why))"
            }
            return
        }
        connected = true
        everConnected = true
        warnedUnreachable = false
        backoff = 1
        settleFirst(.connected)
        var mid: Int32 = 0
        _ = mosquitto_publish(mosq, &mid, "\(prefix)/\(node)/availability", 6, "online", 1, true)
        // A session the broker kept, or not: subscribe again each time (Frigate lost its control after a restart).
        for instance in registry.withLock({ Array($0.keys) }) {
            _ = mosquitto_subscribe(mosq, &mid, "\(prefix)/\(node)/\(instance)/control/set", 1)
        }
        unsubscribed.withLock { $0.removeAll() }
        lastStatus.removeAll()
        counters.withLock { $0.connected = true }
        report(.broker(connected: true, sink: target.description, reason: nil))
    }

    private func dropConnection(_ why: String) {
        let wasConnected = connected
        destroyClient()
        connected = false
        reset = nil
        inflight.removeAll()
        sentThrough = spool.acked
        nextAttempt = ContinuousClock.now + .milliseconds(Int(backoff * 1000))
        backoff = min(backoff * 2, 30)
        counters.withLock { $0.connected = false }
        if wasConnected {
            report(.broker(connected: false, sink: target.description, reason: why))
        } else if !everConnected && !warnedUnreachable {
            warnedUnreachable = true
            settleFirst(.unreachable(why))
            report(
                .warning(
                    message: "\(target): \(why); events wait in the spool and go when it answers", source: "publish"
                ))
        }
    }

    private func destroyClient() {
        if let mosq {
            // Its thread stopped first (at once: a connection still owed is given up); no callback comes after.
            mosquitto_loop_stop(mosq, true)
            mosquitto_destroy(mosq)
        }
        mosq = nil
        notes.withLock { $0.removeAll() }
    }

    /// Sends what the spool holds beyond what is in flight, in order.
    private func pump() {
        guard let mosq else { return }
        for record in spool.unacknowledged where record.index > sentThrough {
            guard inflight.count < 100 else { break }
            let topic = "\(prefix)/\(node)/\(record.instance)/events"
            var mid: Int32 = 0
            let bytes = Array(record.payload.utf8)
            let rc = mosquitto_publish(mosq, &mid, topic, Int32(bytes.count), bytes, 1, false)
            guard rc == MOSQ_ERR_SUCCESS.rawValue else {
                if rc == MOSQ_ERR_NO_CONN.rawValue || rc == MOSQ_ERR_CONN_LOST.rawValue {
                    reset = "the connection was lost"
                }
                break
            }
            inflight[mid] = record.index
            sentThrough = record.index
        }
    }

    private func acknowledged(_ mid: Int32) {
        guard let index = inflight.removeValue(forKey: mid) else { return }
        spool.acknowledge(index)
        counters.withLock { $0.published += 1 }
    }

    private func received(topic: String, text: String) {
        let parts = topic.split(separator: "/").map(String.init)
        guard parts.count >= 4, parts.suffix(2) == ["control", "set"] else { return }
        let instance = parts[parts.count - 3]
        guard let source = registry.withLock({ $0[instance] }) else { return }
        let answer = source.control(text.trimmingCharacters(in: .whitespacesAndNewlines))
        let bytes = Array(answer.encoded().utf8)
        var mid: Int32 = 0
        _ = mosquitto_publish(
            mosq, &mid, "\(prefix)/\(node)/\(instance)/control/state", Int32(bytes.count), bytes, 1, false)
    }

    /// Each instance's status, retained: when its state changes, and every 10 s.
    private func publishStatus() {
        guard let mosq else { return }
        let now = ContinuousClock.now
        for (instance, source) in registry.withLock({ $0 }) {
            let state = source.state()
            if let last = lastStatus[instance], last.state == state, now - last.at < .seconds(10) { continue }
            lastStatus[instance] = (state, now)
            let bytes = Array(source.status().encoded().utf8)
            var mid: Int32 = 0
            _ = mosquitto_publish(
                mosq, &mid, "\(prefix)/\(node)/\(instance)/status", Int32(bytes.count), bytes, 1, true)
        }
    }

}
