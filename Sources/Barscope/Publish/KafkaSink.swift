import CKafka
import Foundation

/// Kafka brokers (librdkafka), on a thread of its own: events go to the spool first, then to TOPIC with the instance
/// as key (one instance's events stay in order in one partition), from an idempotent producer (`acks=all`, no
/// duplicates from its own retries); a record leaves the spool on its delivery report. librdkafka reconnects by
/// itself and holds what is in flight; a record it gives up on is sent again from the spool.
final class KafkaSink: PublishSink, @unchecked Sendable {
    // @unchecked: the producer and the spool are touched by the sink's thread only (delivery reports are served by
    // rd_kafka_poll on it); the inbox and the counters are behind locks.
    let target: PublishTarget
    let node: String
    private let spool: Spool
    private let report: @Sendable (Event) -> Void
    private let inbox = Locked<[(instance: String, seq: Int, payload: String)]>([])
    private let wake = NSCondition()
    let counters = Locked(PublishCounters())
    private let stopRequested = Locked(false)
    private let finished = DispatchSemaphore(value: 0)
    private var producer: OpaquePointer? = nil
    private var topic: OpaquePointer? = nil
    private var sentThrough = 0
    private var inflight = 0
    private var resendFrom: Int? = nil
    private var up = true
    private var lastDropped = 0

    /// - Throws: ``BarscopeError/badValue`` when librdkafka refuses the configuration.
    init(target: PublishTarget, node: String, spool: Spool, report: @escaping @Sendable (Event) -> Void) throws {
        self.target = target
        self.node = node
        self.spool = spool
        self.report = report
        sentThrough = spool.acked
        let conf = rd_kafka_conf_new()
        var error = [CChar](repeating: 0, count: 512)
        let settings = [
            ("bootstrap.servers", target.hosts.map { "\($0.host):\($0.port)" }.joined(separator: ",")),
            ("enable.idempotence", "true"), ("acks", "all"), ("linger.ms", "5"),
            // Never give up on a record: the spool keeps it anyway, and order holds.
            ("message.timeout.ms", "0"), ("client.id", "barscope-\(node)"),
        ]
        for (k, v) in settings where rd_kafka_conf_set(conf, k, v, &error, error.count) != RD_KAFKA_CONF_OK {
            rd_kafka_conf_destroy(conf)
            throw BarscopeError.badValue("\(target): \(k)=\(v): \(String(cString: error))")
        }
        rd_kafka_conf_set_opaque(conf, Unmanaged.passUnretained(self).toOpaque())
        rd_kafka_conf_set_dr_msg_cb(conf) { _, message, opaque in
            guard let message, let opaque else { return }
            Unmanaged<KafkaSink>.fromOpaque(opaque).takeUnretainedValue().delivered(message.pointee)
        }
        rd_kafka_conf_set_error_cb(conf) { _, code, reason, opaque in
            guard let opaque else { return }
            let me = Unmanaged<KafkaSink>.fromOpaque(opaque).takeUnretainedValue()
            me.failed(code, reason.map { String(cString: $0) } ?? "")
        }
        guard let p = rd_kafka_new(RD_KAFKA_PRODUCER, conf, &error, error.count) else {
            throw BarscopeError.badValue("\(target): \(String(cString: error))")
        }
        producer = p
        topic = rd_kafka_topic_new(p, target.path, nil)
    }

    func start() {
        let t = Thread { [self] in loop() }
        t.name = "barscope-kafka"
        t.start()
    }

    func register(_ source: PublishSource) {}
    func unregister(_ instance: String) {}

    func enqueue(instance: String, seq: Int, payload: String) {
        inbox.withLock { $0.append((instance, seq, payload)) }
        wake.lock()
        wake.signal()
        wake.unlock()
    }

    func stop(timeout: Double) {
        stopRequested.withLock { $0 = true }
        wake.lock()
        wake.signal()
        wake.unlock()
        _ = finished.wait(timeout: .now() + timeout + 2)
    }

    private func loop() {
        while !stopRequested.withLock({ $0 }) {
            drainInbox()
            pump()
            rd_kafka_poll(producer, 20)
            counters.withLock { $0.depth = spool.depth }
        }
        drainInbox()
        pump()
        rd_kafka_flush(producer, 3000)
        rd_kafka_poll(producer, 0)
        if let topic { rd_kafka_topic_destroy(topic) }
        if let producer { rd_kafka_destroy(producer) }
        topic = nil
        producer = nil
        spool.close()
        finished.signal()
    }

    private func drainInbox() {
        let items = inbox.withLock { i -> [(instance: String, seq: Int, payload: String)] in
            defer { i.removeAll() }
            return i
        }
        for item in items {
            if spool.append(instance: item.instance, seq: item.seq, payload: item.payload) {
                counters.withLock { $0.spooled += 1 }
            } else {
                counters.withLock { $0.dropped["disk", default: 0] += 1 }
            }
        }
        if spool.dropped > lastDropped {
            let n = spool.dropped - lastDropped
            lastDropped = spool.dropped
            counters.withLock { $0.dropped["spool-full", default: 0] += n }
            report(
                .warning(
                    message: "\(target): the spool is full: the \(n) oldest events were dropped", source: "publish"))
        }
    }

    private func pump() {
        if let from = resendFrom {
            sentThrough = min(sentThrough, from - 1)
            resendFrom = nil
        }
        for record in spool.unacknowledged where record.index > sentThrough {
            guard inflight < 10_000 else { break }
            if spool.isAcknowledged(record.index) {
                sentThrough = record.index
                continue
            }
            let payload = Array(record.payload.utf8)
            let key = Array(record.instance.utf8)
            let opaque = UnsafeMutableRawPointer(bitPattern: record.index)
            let rc = payload.withUnsafeBytes { p in
                key.withUnsafeBytes { k in
                    rd_kafka_produce(
                        topic, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY,
                        UnsafeMutableRawPointer(mutating: p.baseAddress),
                        p.count, k.baseAddress, k.count, opaque)
                }
            }
            guard rc == 0 else { break }  // the producer's queue is full: later
            inflight += 1
            sentThrough = record.index
        }
    }

    private func delivered(_ message: rd_kafka_message_t) {
        inflight -= 1
        let index = Int(bitPattern: message._private)
        if message.err == RD_KAFKA_RESP_ERR_NO_ERROR {
            spool.acknowledge(index)
            counters.withLock {
                $0.published += 1
                $0.connected = true
            }
            if !up {
                up = true
                report(.broker(connected: true, sink: target.description, reason: nil))
            }
        } else {
            resendFrom = min(resendFrom ?? index, index)
        }
    }

    private func failed(_ code: Int32, _ reason: String) {
        // Every broker down: say so once (librdkafka goes on trying; the records wait).
        if code == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN.rawValue, up {
            up = false
            counters.withLock { $0.connected = false }
            report(.broker(connected: false, sink: target.description, reason: reason))
        }
    }
}
