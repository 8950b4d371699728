import Foundation
import TestSupport
import Testing

@testable import Barscope

/// Results back in order, events out of every lock, and nothing dropped where nothing may be.
@Suite(.suiteLimit)
struct DeliveryTests {
    func code(_ data: String, x: Double) -> Detection {
        Detection(
            type: "QR-Code", data: data, quality: 1,
            polygon: [Point(x, 0), Point(x, 10), Point(x + 10, 10), Point(x + 10, 0)])
    }

    @Test func sequencerDeliversInFrameOrderWhateverTheWorkersOrder() {
        var s = ResultSequencer<Int>(lostAfterFrames: 2, everyFrame: false)
        #expect(s.add(.init(sequence: 1, frame: 1, ptsNs: 10, detections: [code("a", x: 0)], payload: 1)).isEmpty)
        let ready = s.add(.init(sequence: 0, frame: 0, ptsNs: 0, detections: [code("a", x: 0)], payload: 0))
        #expect(ready.map(\.frame) == [0, 1])
        #expect(ready.map(\.payload) == [0, 1])
        #expect(ready[0].appeared.count == 1 && ready[1].appeared.isEmpty, "one track, started on frame 0")
        #expect(ready[0].events.map(\.name) == ["appeared"])
        let empty = s.add(.init(sequence: 2, frame: 2, ptsNs: 20, detections: [], payload: 2))
        _ = s.add(.init(sequence: 3, frame: 3, ptsNs: 30, detections: [], payload: 3))
        let lost = s.add(.init(sequence: 4, frame: 4, ptsNs: 40, detections: [], payload: 4))
        #expect((empty + lost).flatMap(\.events).map(\.name) == ["lost"])
        #expect(s.finish().isEmpty && s.delivered == 5 && s.tracksStarted == 1)
    }

    @Test func negativeFramesAreNumberedByDelivery() {
        var s = ResultSequencer<Void>(lostAfterFrames: 5)
        let a = s.addNow(frame: -1, ptsNs: nil, detections: [], payload: ())
        let b = s.add(.init(sequence: 0, frame: -1, ptsNs: nil, detections: [], payload: ()))
        #expect(a.frame == 0 && b.map(\.frame) == [1])
    }

    /// Defect 2: an observer that reads the controller or stops it is called with no lock of ours held, in order.
    @Test func outboxDeliversInOrderOffTheProducersThread() {
        let seen = Locked<[Int]>([])
        let producerThread = Locked<Thread?>(nil)
        let onProducer = Locked(false)
        let outbox = EventOutbox(capacity: 8, name: "test") { e in
            if case .warning(let m, _) = e, let n = Int(m) {
                seen.withLock { $0.append(n) }
                if Thread.current === producerThread.withLock({ $0 }) { onProducer.withLock { $0 = true } }
            }
        }
        let lock = NSLock()
        producerThread.withLock { $0 = Thread.current }
        for n in 0..<1000 {
            // Posting under a lock of the producer's: delivery never happens here.
            lock.lock()
            outbox.post(.warning(message: String(n), source: nil))
            lock.unlock()
        }
        outbox.close()
        #expect(seen.withLock { $0 } == Array(0..<1000))
        #expect(!onProducer.withLock { $0 })
    }

    @Test func anObserverMayPostAndCloseWithoutDeadlock() {
        let count = Locked(0)
        let box = Locked<EventOutbox?>(nil)
        let outbox = EventOutbox(capacity: 1, name: "reentrant") { e in
            count.withLock { $0 += 1 }
            if case .state("first") = e {
                // Re-entrant calls from the observer return at once.
                box.withLock { $0 }?.post(.state("second"))
                box.withLock { $0 }?.flush()
            }
        }
        box.withLock { $0 = outbox }
        outbox.post(.state("first"))
        outbox.flush()
        outbox.close()
        #expect(count.withLock { $0 } == 2)
        box.withLock { $0 = nil }
    }

    /// A live source's outbox never waits: past its capacity events are dropped, counted, and said in a warning;
    /// a file's producer waits for room before its next frame, holding no lock.
    @Test func liveOutboxDropsAndSaysSoFileOutboxMakesRoom() {
        let gate = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        let names = Locked<[String]>([])
        let live = EventOutbox(capacity: 2, name: "live", waits: false) { e in
            if case .state("first") = e {
                holding.signal()
                gate.wait()
            }
            names.withLock { $0.append(e.jsonLine) }
        }
        live.post(.state("first"))
        // The observer holds "first": the queue is empty, and the next 10 find room for 2.
        #expect(holding.wait(timeout: .now() + 10) == .success, "the observer never got the first event")
        for n in 0..<10 { live.post(.warning(message: "n\(n)", source: nil)) }
        #expect(live.dropped == 8)
        gate.signal()
        live.close()
        #expect(names.withLock { $0 }.last?.contains("events: 8 dropped, the observer fell behind") == true)

        // A slow observer (10 ms an event, a stand-in for a slow reader: pacing, not a wait).
        let file = EventOutbox(capacity: 2, name: "file") { _ in
            Thread.sleep(forTimeInterval: 0.01)  // pacing the observer: 10 ms an event
        }
        for n in 0..<20 {
            file.waitForRoom()
            file.post(.warning(message: "n\(n)", source: nil))
        }
        #expect(file.dropped == 0)
        file.close()
    }

    /// Defect 3: to a file, nothing is dropped, however fast events come and however small the queue.
    @Test func writerToAFileWaitsInsteadOfDropping() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("events-\(getpid()).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try EventWriter(path: path, capacity: 4, whenFull: .wait)
        DispatchQueue.concurrentPerform(iterations: 4) { t in
            for n in 0..<2500 { writer.write(.warning(message: "\(t)-\(n)", source: nil)) }
        }
        writer.close()
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 10_000)
        #expect(writer.dropped == 0)
    }

    /// A live source's reader that does not read: events are dropped and counted, the producer never waits.
    @Test func writerForALiveSourceDropsWhenTheReaderDoesNotRead() throws {
        // The tool ignores SIGPIPE (a reader that goes away must not kill it); so does this test process.
        signal(SIGPIPE, SIG_IGN)
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        // The pipe's writing end is the writer's; nobody reads the other end.
        let path = "/dev/fd/\(fds[1])"
        let writer = try EventWriter(path: path, capacity: 16, whenFull: .drop)
        close(fds[1])
        let started = Date()
        let long = String(repeating: "x", count: 4000)
        for _ in 0..<2000 { writer.write(.warning(message: long, source: nil)) }
        #expect(Date().timeIntervalSince(started) < 5, "the producer never waited for the reader")
        #expect(writer.dropped > 0)
        writer.abandon()
    }

    @Test func ledgerKeepsOnlyFramesABranchStillNeeds() {
        let ledger = FrameLedger(frameAccurate: true, drawn: true)
        for _ in 0..<100 { _ = ledger.admit(ptsNs: 7, stamp: .init()) }  // the same pts on every frame: no matter
        #expect(ledger.count == 100)
        for f in 0..<100 { _ = ledger.scanned(f, detections: [code("\(f)", x: 0)], appeared: f == 3 ? [1] : []) }
        #expect(ledger.count == 100, "not drawn yet")
        let third = ledger.forDrawing(3, timeout: 1)
        #expect(third.detections?.first?.data == "3")
        #expect(third.snapshot == FrameLedger.Snapshot(frame: 3, ptsNs: 7, tracks: [1]))
        #expect(ledger.count == 96, "frames 0...3 passed by both branches")
        _ = ledger.forDrawing(99, timeout: 1)
        #expect(ledger.count == 0)
    }

    @Test func liveSnapshotsGoOnTheNextFrameDrawn() {
        let ledger = FrameLedger(frameAccurate: false, drawn: true)
        for _ in 0..<3 { _ = ledger.admit(ptsNs: nil, stamp: .init()) }
        _ = ledger.forDrawing(0, timeout: 1)
        _ = ledger.forDrawing(1, timeout: 1)
        // The scanner delivers frame 0 after the overlay drew frames 0 and 1 (live: it never waits).
        _ = ledger.scanned(0, detections: [code("a", x: 0)], appeared: [1])
        let next = ledger.forDrawing(2, timeout: 1)
        #expect(next.detections?.map(\.data) == ["a"])
        #expect(next.snapshot?.frame == 2 && next.snapshot?.tracks == [1])
    }
    /// Live, a frame is drawn with its own results, not the newest (a moving code's box trailed it by a frame or
    /// two): those already in hand, or those that come within the bound while the overlay waits; a frame the
    /// scanner passed without results (dropped to stay live) is drawn with the newest.
    @Test func liveFramesAreDrawnWithTheirOwnResults() throws {
        let ledger = FrameLedger(frameAccurate: false, drawn: true)
        for _ in 0..<4 { _ = ledger.admit(ptsNs: nil, stamp: .init()) }
        _ = ledger.scanned(0, detections: [code("a", x: 0)], appeared: [])
        _ = ledger.scanned(1, detections: [code("a", x: 10)], appeared: [])
        #expect(ledger.forDrawing(0, timeout: 1).detections?.first?.polygon.first?.x == 0)
        // Frame 2's results arrive while the overlay waits for them.
        let late = Thread { _ = ledger.scanned(2, detections: [code("a", x: 20)], appeared: []) }
        let started = Date()
        late.start()
        #expect(ledger.forDrawing(2, timeout: 1, liveBound: 5).detections?.first?.polygon.first?.x == 20)
        #expect(Date().timeIntervalSince(started) < 4, "the wait ends when the results come")
        // Frame 3 never gets results (the scanner skipped it, and is past it): the newest.
        _ = ledger.scanned(4, detections: [code("a", x: 40)], appeared: [])
        #expect(ledger.forDrawing(3, timeout: 1).detections?.first?.polygon.first?.x == 40)
    }
}
