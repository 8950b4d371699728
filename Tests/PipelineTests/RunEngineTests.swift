import Barscope
import Foundation
import Synchronization
import TestSupport
import Testing

/// The run engine's defects (issue 13), each on real pipelines.
@Suite(.serialized, .suiteLimit) struct RunEngineTests {
    /// Names of this process's threads (Linux: /proc/self/task/N/comm, 15 characters).
    static func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap {
            try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
    static func scanThreads() -> Int { threadNames().filter { $0.hasPrefix("barscope-scan") }.count }

    /// Defect 1: a graph that fails to build (here a property on an element that is not there) leaves no scanning
    /// thread behind, however often it is tried.
    @Test func aGraphThatFailsToBuildLeavesNoThreads() throws {
        var c = RunConfiguration()
        c.input = .demo(DemoOptions(size: Size(width: 320, height: 240), frames: 10))
        c.scanThreads = 3
        c.properties = [ElementProperty(element: "nosuch", property: "x", value: "1", origin: "test.conf")]
        let before = Self.scanThreads()
        for _ in 0..<10 {
            #expect(throws: BarscopeError.self) { try runScan(c) }
        }
        // Threads that are ending may take a moment to leave /proc.
        pollUntil(5) { Self.scanThreads() <= before }
        #expect(Self.scanThreads() <= before, "\(Self.scanThreads() - before) scanning threads left behind")
    }

    /// Defect 2: an observer that reads the progress and stops the controller, from inside an event, neither
    /// deadlocks nor stalls a worker: the stop takes effect at once.
    @Test func anObserverMayReadProgressAndStop() throws {
        var c = RunConfiguration()
        c.input = try InputSource.parse(
            try Media.demoClip(DemoOptions(size: Size(width: 640, height: 360), frames: 300)))
        c.everyFrame = true
        let box = Locked<ScanController?>(nil)
        let progressRead = Locked<ScanProgress?>(nil)
        let stoppedAt = Locked<Date?>(nil)
        let controller = ScanController(name: "reentrant", configuration: c) { event in
            guard case .detection(let frame, _, _, _) = event, frame >= 20, stoppedAt.withLock({ $0 }) == nil else {
                return
            }
            stoppedAt.withLock { $0 = Date() }
            let controller = box.withLock { $0 }
            progressRead.withLock { $0 = controller?.progress }
            // Called from the observer: asks and returns at once.
            #expect(controller?.stop() == false)
        }
        box.withLock { $0 = controller }
        defer { box.withLock { $0 = nil } }
        controller.start()
        #expect(controller.wait(timeout: 30), "the controller ends")
        let stopped = try #require(stoppedAt.withLock { $0 })
        #expect(Date().timeIntervalSince(stopped) < 5, "ended \(Date().timeIntervalSince(stopped)) s after the stop")
        #expect((progressRead.withLock { $0 }?.frames ?? 0) > 0)
        let summary = try #require(controller.summary)
        #expect(summary.interrupted && summary.frames < 300)
    }

    /// Defect 5: --snapshots on a live source writes the annotated frame of each new code, and the ledger does
    /// not grow with the codes.
    @Test func snapshotsOnTheLiveDemo() throws {
        let folder = Media.folder.appendingPathComponent("live-snapshots-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var c = RunConfiguration()
        c.input = .demo(DemoOptions(size: Size(width: 640, height: 360), fps: 30, frames: 60, live: true))
        c.snapshotFolder = folder
        let ledgerSizes = Locked<[Int]>([])
        let box = Locked<ScanController?>(nil)
        let controller = ScanController(name: "snapshots", configuration: c) { _ in
            if let n = box.withLock({ $0 })?.ledgerCount { ledgerSizes.withLock { $0.append(n) } }
        }
        box.withLock { $0 = controller }
        defer { box.withLock { $0 = nil } }
        let summary = try controller.run()
        expectLiveFrames(summary, delivered: Sanitizer.atLeast(60))
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".png") }
        #expect(!files.isEmpty, "\(folder): no snapshot")
        // Each snapshot names tracks; together they cover the three codes of the demo.
        let tracks = Set(files.flatMap { $0.dropLast(4).split(separator: "-").dropFirst(3).compactMap { Int($0) } })
        #expect(tracks.count >= 3, "\(files)")
        #expect((ledgerSizes.withLock { $0 }.max() ?? 0) < 30, "ledger sizes \(ledgerSizes.withLock { $0 })")
    }

    /// An instance with only a preview (the service's, nobody watching) draws nothing: the preview's gate is at the
    /// overlay branch's entrance, and the frames it drops leave the ledger as drawn (without that, the ledger kept
    /// every frame). Once someone wants a frame, annotated frames come.
    @Test func anUnwatchedPreviewDrawsNothingAndHoldsNothing() throws {
        var c = RunConfiguration()
        c.input = .demo(DemoOptions(size: Size(width: 640, height: 360), fps: 30, frames: 90, live: true))
        let tap = PreviewTap()
        c.preview = tap
        let controller = ScanController(name: "preview", configuration: c) { _ in }
        // The ledger's size every 50 ms while it runs; after 2 s, someone wants a frame.
        let ledgerSizes = Locked<[Int]>([])
        let before = Locked<Bool?>(nil)
        let done = Atomic<Bool>(false)
        let sampler = Thread {
            let start = Date()
            while !done.load(ordering: .relaxed) {
                if let n = controller.ledgerCount { ledgerSizes.withLock { $0.append(n) } }
                if before.withLock({ $0 }) == nil && Date().timeIntervalSince(start) > 2 {
                    before.withLock { $0 = tap.latest == nil }
                    tap.want(for: 30)
                }
                Thread.sleep(forTimeInterval: 0.05)  // pacing the sampler: the ledger's size every 50 ms
            }
        }
        sampler.start()
        defer { done.store(true, ordering: .relaxed) }
        let summary = try controller.run()
        done.store(true, ordering: .relaxed)
        expectLiveFrames(summary, delivered: Sanitizer.atLeast(90))
        #expect(before.withLock { $0 } == true, "a frame was drawn for the preview before anyone wanted one")
        #expect(tap.latest != nil, "no annotated frame once one was wanted")
        #expect((ledgerSizes.withLock { $0 }.max() ?? 0) < 30, "ledger sizes \(ledgerSizes.withLock { $0 })")
    }

    /// Defect 7: for a file (frames as fast as they can be scanned), a frame's latency is its own scan and the
    /// short bounded queues before it, not a second of frames waiting in a queue: at most a few frame intervals of
    /// the run itself (measured in the same run, so the bound holds on a slower or busier machine).
    @Test func fileLatencyIsAFewFramesNotAQueue() throws {
        var c = RunConfiguration()
        c.input = .demo(DemoOptions(size: Size(width: 1280, height: 720), frames: 150))
        c.recording = try Recording(path: Media.folder.appendingPathComponent("latency-\(UUID().uuidString).mp4").path)
        let (summary, _) = try runScan(c)
        let interval = summary.seconds / Double(summary.frames) * 1000
        let latency = try #require(summary.latencyMs)
        #expect(latency.p50 < 12 * interval, "p50 \(latency.p50) ms with a frame every \(interval) ms")
    }

    /// One supervisor: a wrong RTSP password fails at once under a restart policy too (it cannot get better by
    /// trying again), as it does from the command line.
    @Test func aWrongPasswordIsNotRetriedByThePolicy() throws {
        let clip = try Media.demoClip(DemoOptions(size: Size(width: 640, height: 360), fps: 30, frames: 60))
        let server = try testRTSPServer(clip: clip, credentials: ("dock", "open-sesame"))
        var c = RunConfiguration()
        c.rtspTransport = "tcp"
        c.input = try InputSource.parse("rtsp://dock:wrong@127.0.0.1:\(server.port)/demo")
        let log = EventLog()
        let controller = ScanController(name: "wrong", configuration: c, restart: .onError) { log.append($0) }
        let started = Date()
        #expect(throws: BarscopeError.self) { try controller.run() }
        #expect(Date().timeIntervalSince(started) < 15)
        #expect(!log.all.map(\.name).contains("reconnecting"), "\(log.all.map(\.name))")
        guard case .failed(let why) = controller.state else {
            Issue.record("\(controller.state)")
            return
        }
        #expect(why.contains("wrong user name or password") && !why.contains("wrong@"))
        withExtendedLifetime(server) {}
    }

    /// Live settings have one home: style changes add up, and a restart keeps every change.
    @Test func liveChangesAddUpAndSurviveARestart() throws {
        var c = RunConfiguration()
        c.input = .demo(DemoOptions(size: Size(width: 640, height: 360), fps: 30, frames: 0, live: true))
        let log = EventLog()
        let controller = ScanController(
            name: "settings", configuration: c, restart: .onError, backoff: ReconnectPolicy(initialDelay: 0.1)
        ) { log.append($0) }
        try controller.settings.updateStyle { try $0.apply("box-color=#FF0000") }
        try controller.settings.updateStyle { try $0.apply("labels=off") }
        let v = controller.settings.values
        #expect(v.style.showLabels == false && v.style.boxColor == Color(hex: "#FF0000"), "style changes add up")
        controller.start()
        defer { controller.stop() }
        func types(after index: Int) -> Set<String> {
            Set(
                log.all.dropFirst(index).compactMap { e -> String? in
                    if case .appeared(_, _, let d, _) = e { return d.type }
                    return nil
                })
        }
        waitUntil(10, "three codes appeared", seen: { "\(types(after: 0))" }) { types(after: 0).count >= 3 }
        #expect(types(after: 0) == ["QR-Code", "EAN-13", "CODE-128"], "all three before the change")
        // Changed while playing, then the pipeline fails and is rebuilt: the new run reads QR codes only.
        controller.setDecoder(try ScannerSettings(["disable", "qrcode.enable"]))
        controller.injectError("drill")
        var recovered: Int? = nil
        pollUntil(10) {
            recovered = log.all.firstIndex { $0.name == "recovered" }
            return recovered != nil
        }
        let from = try #require(recovered, "no recovery: \(log.all.map(\.name))")
        pollUntil(5) { !types(after: from).isEmpty }
        #expect(types(after: from) == ["QR-Code"], "after the restart: \(types(after: from))")
        #expect(controller.settings.applied(to: c).style == v.style, "the style too")
    }
}
