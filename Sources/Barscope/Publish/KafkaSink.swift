import CKafka
import Foundation

/// Kafka brokers (librdkafka), on a thread of its own: events go to the spool first, then to TOPIC with the instance
/// as key (one instance's events stay in order in one partition), from an idempotent producer (`acks=all`, no
/// duplicates from its own retries); a record leaves the spool on its delivery report. librdkafka reconnects by
/// itself and holds what is in flight; a record it gives up on is sent again from the spool.
final class KafkaSink: PublishSink, @unchecked Sendable {
    // Sendable: the producer and the spool are touched by the sink's thread only (delivery reports are served by
    // rd_kafka_poll on it); the inbox and the counters are behind locks.
    let target: PublishTarget
    let node: String
    let queue: SinkQueue
    private var spool: Spool { queue.spool }
    private let report: @Sendable (Event) -> Void
    let finished = DispatchSemaphore(value: 0)
    private var producer: OpaquePointer? = nil
    private var topic: OpaquePointer? = nil
    private var sentThrough = 0
    private var inflight = 0
    /// Records whose delivery failed, to produce again (by themselves: the others are still in librdkafka's hands),
    /// and how often each failed.
    private var retry: [Int] = []
    private var failures: [Int: Int] = [:]
    private var up = true
    private var fatalSaid = false

    /// - Throws: ``BarscopeError/badValue`` when librdkafka refuses the configuration.
    init(target: PublishTarget, node: String, spool: Spool, report: @escaping @Sendable (Event) -> Void) throws {
        self.target = target
        self.node = node
        queue = SinkQueue(spool: spool, target: target, report: report)
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
            throw BarscopeError.badValue("\(target): \(k)=\(v): \(Self.text(error))")
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
            throw BarscopeError.badValue("\(target): \(Self.text(error))")
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

    private func loop() {
        while !queue.stopping {
            queue.drain()
            pump()
            rd_kafka_poll(producer, 20)
        }
        queue.drain()
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

    private func pump() {
        // First what failed, by itself, in order.
        if !retry.isEmpty {
            let again = retry.sorted()
            retry.removeAll()
            for index in again {
                guard let record = spool.unacknowledged.first(where: { $0.index == index }) else { continue }
                if !produce(record) { retry.append(index) }
            }
        }
        for record in spool.unacknowledged where record.index > sentThrough {
            guard inflight < 10_000 else { break }
            if spool.isAcknowledged(record.index) {
                sentThrough = record.index
                continue
            }
            guard produce(record) else { break }  // the producer's queue is full: later
            sentThrough = record.index
        }
    }

    private func produce(_ record: Spool.Record) -> Bool {
        let payload = Array(record.payload.utf8)
        let key = Array(record.instance.utf8)
        let opaque = UnsafeMutableRawPointer(bitPattern: record.index)
        let rc = payload.withUnsafeBytes { p in
            key.withUnsafeBytes { k in
                rd_kafka_produce(
                    topic, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY, UnsafeMutableRawPointer(mutating: p.baseAddress),
                    p.count, k.baseAddress, k.count, opaque)
            }
        }
        if rc == 0 { inflight += 1 }
        return rc == 0
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
            // librdkafka gave up on it (it retries what can be retried by itself): again, a few times, then it is
            // dropped, counted and said (a record too large, a topic refused: trying forever would block nothing
            // but would never end).
            let n = (failures[index] ?? 0) + 1
            failures[index] = n
            if n < 5 {
                retry.append(index)
            } else {
                failures[index] = nil
                spool.acknowledge(index)
                counters.withLock { $0.dropped["rejected", default: 0] += 1 }
                report(
                    .warning(
                        message:
                            "\(target): an event was refused 5 times (\(String(cString: rd_kafka_err2str(message.err)))); "
                            + "dropped", source: "publish"))
            }
        }
        if rd_kafka_fatal_error(producer, nil, 0) != RD_KAFKA_RESP_ERR_NO_ERROR, !fatalSaid {
            fatalSaid = true
            report(
                .warning(
                    message: "\(target): the producer hit a fatal error; events wait in the spool", source: "publish"))
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

    /// librdkafka's error text: a NUL-terminated C string in a buffer of ours.
    private static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
