import CKafka
import Foundation
import TestSupport
import Testing

@testable import Barscope

/// `--publish kafka://`: librdkafka's own mock cluster stands in for Kafka brokers (a real Kafka cannot be installed
/// on this machine); the producer, its protocol and its reconnects are librdkafka's real ones, over loopback.
///
/// Not under ThreadSanitizer (`scripts/test --sanitize thread`): librdkafka starts its threads with C11 thrd_create,
/// which the toolchain's TSan runtime does not intercept, so those threads have no TSan state and the runtime itself
/// crashes on their first allocation (SEGV in its allocator, "CHECK failed: thr->slot != 0"). The plain run and
/// `--sanitize address` run them.
@Suite(
    .serialized,
    .enabled(
        if: ProcessInfo.processInfo.environment["BARSCOPE_SANITIZER"] != "thread",
        "librdkafka's thrd_create threads crash the ThreadSanitizer runtime; run without --sanitize thread"),
    .suiteLimit)
struct KafkaTests {
    final class Cluster {
        let host: OpaquePointer
        let mock: OpaquePointer
        var bootstraps: String { String(cString: rd_kafka_mock_cluster_bootstraps(mock)) }

        init(brokers: Int32, topic: String) throws {
            var error = [CChar](repeating: 0, count: 256)
            host = try #require(rd_kafka_new(RD_KAFKA_PRODUCER, rd_kafka_conf_new(), &error, error.count))
            mock = try #require(rd_kafka_mock_cluster_new(host, brokers))
            rd_kafka_mock_topic_create(mock, topic, 1, brokers)
        }

        deinit {
            rd_kafka_mock_cluster_destroy(mock)
            rd_kafka_destroy(host)
        }

        /// Every message of partition 0, from the beginning, as text (waits at most `seconds` for `count`).
        func messages(_ topic: String, count: Int, seconds: Double = 20) -> [(key: String, value: String)] {
            var error = [CChar](repeating: 0, count: 256)
            let conf = rd_kafka_conf_new()
            rd_kafka_conf_set(conf, "bootstrap.servers", bootstraps, &error, error.count)
            guard let consumer = rd_kafka_new(RD_KAFKA_CONSUMER, conf, &error, error.count) else { return [] }
            defer { rd_kafka_destroy(consumer) }
            let t = rd_kafka_topic_new(consumer, topic, nil)
            defer { rd_kafka_topic_destroy(t) }
            rd_kafka_consume_start(t, 0, Int64(RD_KAFKA_OFFSET_BEGINNING))
            defer { rd_kafka_consume_stop(t, 0) }
            var out: [(String, String)] = []
            let deadline = Date(timeIntervalSinceNow: seconds)
            while out.count < count && Date() < deadline {
                guard let m = rd_kafka_consume(t, 0, 200) else { continue }
                defer { rd_kafka_message_destroy(m) }
                guard m.pointee.err == RD_KAFKA_RESP_ERR_NO_ERROR, let payload = m.pointee.payload else { continue }
                let value = String(
                    decoding: UnsafeRawBufferPointer(start: payload, count: m.pointee.len), as: UTF8.self)
                let key =
                    m.pointee.key.map {
                        String(decoding: UnsafeRawBufferPointer(start: $0, count: m.pointee.key_len), as: UTF8.self)
                    } ?? ""
                out.append((key, value))
            }
            return out
        }
    }

    /// Every event gets its delivery report, also those given while every broker was down (they wait in the spool
    /// and in librdkafka's queue); the topic then holds them all once, in seq order, keyed by the instance.
    @Test func everyEventIsDeliveredThroughABrokerOutage() throws {
        let cluster = try Cluster(brokers: 3, topic: "scans")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kafka-\(UUID().uuidString)").path
        var settings = PublishSettings()
        settings.targets = [try PublishTarget.parse("kafka://\(cluster.bootstraps)/scans")]
        settings.node = "n1"
        settings.spool = folder
        let publisher = try Publisher(settings, stateFolder: folder)
        let news = Locked<[Event]>([])
        publisher.onEvent { e in news.withLock { $0.append(e) } }
        let channel = publisher.channel(
            PublishSource(instance: "cam1", status: { .null }, state: { .playing }, control: { _ in .null }))
        func counts() -> PublishCounters { publisher.counters[0].counts }

        for i in 0..<200 { channel.publish(.state("before-\(i)")) }
        #expect(pollUntil(20) { counts().published == 200 }, "\(counts())")

        rd_kafka_mock_broker_set_down(cluster.mock, -1)
        for i in 0..<200 { channel.publish(.state("during-\(i)")) }
        // Once the publisher has seen the outage (its broker-down event), the 200 wait and none was delivered.
        #expect(
            pollUntil(20) {
                news.withLock {
                    $0.contains { if case .broker(false, _, _) = $0 { return true } else { return false } }
                }
            }, "no broker-down event in 20 s: \(counts())")
        #expect(pollUntil(20) { counts().depth == 200 }, "the 200 waiting: \(counts())")
        #expect(counts().published == 200, "nothing is delivered while every broker is down: \(counts())")

        rd_kafka_mock_broker_set_up(cluster.mock, -1)
        #expect(pollUntil(60) { counts().published == 400 && counts().depth == 0 }, "\(counts())")
        #expect(
            news.withLock { $0.contains { if case .broker(true, _, _) = $0 { return true } else { return false } } })
        publisher.stop()

        let messages = cluster.messages("scans", count: 400)
        #expect(messages.count == 400)
        #expect(Set(messages.map(\.key)) == ["cam1"])
        let seqs = messages.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.value.utf8)) as? [String: Any])?["seq"] as? Int
        }
        #expect(seqs == Array(1...400), "in order, once each")
    }
}
