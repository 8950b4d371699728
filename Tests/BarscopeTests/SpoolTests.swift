import Foundation
import TestSupport
import Testing

@testable import Barscope

/// The publishing spool: written before sending, read again after a restart, cleared by acknowledgements (in any
/// order), bounded with the oldest dropped and counted.
@Suite(.suiteLimit) struct SpoolTests {
    static func folder() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("spool-\(UUID().uuidString)").path
    }

    static func payload(_ i: Int) -> String {
        #"{"event":"state","seq":\#(i),"state":"\#(String(repeating: "x", count: 180))"}"#
    }

    @Test func whatIsNotAcknowledgedSurvivesARestart() throws {
        let dir = Self.folder()
        do {
            let spool = try Spool(folder: dir, maxBytes: 1 << 20)
            for i in 1...100 { #expect(spool.append(instance: "cam1", seq: i, payload: Self.payload(i))) }
            // Acknowledgements out of order: only the run from the start counts as done.
            for i in [3, 1, 2, 5] { spool.acknowledge(i) }
            #expect(spool.acked == 3)
            #expect(spool.depth == 97)
            spool.close()
        }
        let again = try Spool(folder: dir, maxBytes: 1 << 20)
        #expect(again.unacknowledged.map(\.index) == Array(4...100))
        #expect(again.unacknowledged.first?.payload == Self.payload(4))
        #expect(again.lastSeq["cam1"] == 100)
        // New records continue the numbering.
        again.append(instance: "cam1", seq: 101, payload: Self.payload(101))
        #expect(again.unacknowledged.last?.index == 101)
    }

    @Test func aFullSpoolDropsTheOldestAndCountsThem() throws {
        let spool = try Spool(folder: Self.folder(), maxBytes: 64 << 10)
        for i in 1...2000 { spool.append(instance: "cam1", seq: i, payload: Self.payload(i)) }
        #expect(spool.dropped > 0)
        #expect(spool.bytes <= 64 << 10)
        #expect(spool.depth + spool.dropped == 2000)
        // What is kept is the newest, in order.
        let kept = spool.unacknowledged.map(\.index)
        #expect(kept == Array((2001 - kept.count)...2000))
    }

    @Test func acknowledgedSegmentsAreRemoved() throws {
        let dir = Self.folder()
        let spool = try Spool(folder: dir, maxBytes: 1 << 20)
        for i in 1...3000 { spool.append(instance: "cam1", seq: i, payload: Self.payload(i)) }
        let before = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix("seg-") }.count
        for i in 1...3000 { spool.acknowledge(i) }
        spool.flushAcks()
        let after = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix("seg-") }.count
        #expect(before > 1)
        #expect(after <= 1, "\(before) segments, \(after) left")
        #expect(spool.depth == 0)
    }

    /// Through the publisher: a broker that cannot be reached and a spool too small say so (a warning, counted).
    @Test func theFullSpoolIsSaid() throws {
        let port = 1  // nothing listens on port 1
        var settings = PublishSettings()
        settings.targets = [try PublishTarget.parse("mqtt://127.0.0.1:\(port)/bs")]
        settings.spool = Self.folder()
        settings.spoolMaxBytes = 64 << 10
        let publisher = try Publisher(settings, stateFolder: settings.spool!)
        let news = Locked<[String]>([])
        publisher.onEvent { e in if case .warning(let m, _) = e { news.withLock { $0.append(m) } } }
        let channel = publisher.channel(
            PublishSource(instance: "cam1", status: { .null }, state: { .playing }, control: { _ in .null }))
        for i in 0..<2000 { channel.publish(.state("s\(i)-" + String(repeating: "y", count: 150))) }
        pollUntil(10) { (publisher.counters[0].counts.dropped["spool-full"] ?? 0) > 0 }
        publisher.stop(timeout: 0)
        #expect((publisher.counters[0].counts.dropped["spool-full"] ?? 0) > 0)
        #expect(news.withLock { $0 }.contains { $0.contains("the spool is full") })
        #expect(news.withLock { $0 }.contains { $0.contains("events wait in the spool") })
    }
}
