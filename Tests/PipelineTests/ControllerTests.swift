import Barscope
import Foundation
import TestSupport
import Testing

/// The controller, as a program embedding Barscope uses it: real pipelines, their events read from the
/// `AsyncStream`, controlled from another task.
@Suite(.serialized, .suiteLimit) struct ControllerTests {
    /// The live demo at a small size, until stopped (or `frames`).
    static func liveDemo(frames: Int = 0) -> RunConfiguration {
        var c = RunConfiguration()
        c.input = .demo(DemoOptions(size: Size(width: 640, height: 360), fps: 30, frames: frames, live: true))
        c.scanThreads = 1
        return c
    }

    /// Collects a controller's events through its observer, as they come (no task needed: the test threads may
    /// all be busy running other suites' pipelines).
    final class Collector: Sendable {
        let log = EventLog()
        var observe: @Sendable (Event) -> Void { { [log] in log.append($0) } }
        var all: [Event] { log.all }
        func count(where match: (Event) -> Bool) -> Int { all.filter(match).count }
        /// Waits up to `seconds` for an event that matches.
        func waitFor(_ seconds: Double, _ match: (Event) -> Bool) -> Bool {
            pollUntil(seconds) { all.contains(where: match) }
        }
        /// The frame numbers of the detections so far.
        var detectionFrames: [Int] {
            all.compactMap {
                if case .detection(let frame, _, _, _) = $0 { return frame }
                return nil
            }
        }
    }

    static func isEOS(_ e: Event) -> Bool {
        if case .eos = e { return true }
        return false
    }
    static func isAppeared(_ e: Event) -> Bool {
        if case .appeared = e { return true }
        return false
    }

    @Test func twoPipelinesRunAtOnceEachWithItsOwnEvents() async throws {
        var file = RunConfiguration()
        file.input = try InputSource.parse(
            try Media.demoClip(DemoOptions(size: Size(width: 960, height: 540), frames: 90)))
        file.scanThreads = 1
        let a = ScanController(name: "file-annotate", configuration: file)
        let b = ScanController(name: "dock-camera", configuration: Self.liveDemo(frames: 45))
        a.start()
        b.start()
        #expect(a.wait(timeout: 60) && b.wait(timeout: 60))
        #expect(a.state == .stopped && b.state == .stopped)
        // Both have ended: each stream holds its own events, buffered, and then finishes.
        var ea: [Event] = []
        var eb: [Event] = []
        for await e in a.events { ea.append(e) }
        for await e in b.events { eb.append(e) }
        guard case .eos(let framesA, let codesA, _, _, _) = try #require(ea.last(where: Self.isEOS)),
            case .eos(let framesB, let codesB, _, _, _) = try #require(eb.last(where: Self.isEOS))
        else { return }
        #expect(framesA == 90 && codesA == 3, "file: \(framesA) frames, \(codesA) codes")
        // Live: the scanner drops frames when the machine is busy (other suites run beside this one).
        #expect(codesB >= 2, "live: \(framesB) frames, \(codesB) codes")
        let live = try #require(b.summary)
        #expect(live.frames == framesB)
        expectLiveFrames(live, delivered: Sanitizer.atLeast(45))
        #expect(a.summary?.frames == 90)
    }

    @Test func pauseHoldsTheStreamAndResumeGoesOn() throws {
        var c = Self.liveDemo()
        c.everyFrame = true
        let events = Collector()
        let controller = ScanController(name: "pausable", configuration: c, observer: events.observe)
        controller.start()
        defer { controller.stop() }
        #expect(
            events.waitFor(10) {
                if case .detection = $0 { return true }
                return false
            })
        // (The log also holds the "paused" of the start, on the way to playing: count from here.)
        let pausedBefore = events.count { $0 == .state("paused") }
        controller.pause()
        // The controller's state changes before its observers hear the event: wait for both.
        #expect(
            events.waitFor(30) { _ in
                controller.state == .paused && events.count { $0 == .state("paused") } > pausedBefore
            })
        // Paused, the tee lets no frame through. The frames already past it (the ledger holds them until both
        // branches are done) may still be scanned and reported; their numbers are below `bound`: a frame's number
        // is its place at the tee, and frames scanned or skipped plus those held count every frame that came.
        let held = controller.ledgerCount ?? 0
        let bound = framesThroughTheTee(controller) + held
        Thread.sleep(forTimeInterval: 1)  // a window to watch for frames that must not come, not a wait
        let during = events.detectionFrames
        let late = during.filter { $0 >= bound }
        #expect(late.isEmpty, "frames scanned while paused: \(Set(late).sorted()) (frames up to \(bound) were in)")
        #expect(framesThroughTheTee(controller) <= bound, "frames passed the tee while paused")
        controller.resume()
        #expect(events.waitFor(30) { _ in controller.state == .playing })
        let more = Sanitizer.atLeast(10, "detections after resume")
        #expect(
            events.waitFor(30) { _ in events.detectionFrames.count > during.count + more },
            "frames flow again after resume (\(events.detectionFrames.count - during.count) detections)")
        #expect(controller.stop())
        #expect(controller.state == .stopped)
    }

    /// A live demo that restarts on error after `delay` seconds, started, reading codes, then made to fail.
    func failedOnce(_ name: String, delay: Double, error: String) -> (ScanController, Collector) {
        let events = Collector()
        let controller = ScanController(
            name: name, configuration: Self.liveDemo(), restart: .onError,
            backoff: ReconnectPolicy(initialDelay: delay, maxDelay: max(1, delay), maxAttempts: 3),
            observer: events.observe)
        controller.start()
        #expect(events.waitFor(10, Self.isAppeared))
        controller.injectError(error)
        return (controller, events)
    }

    @Test func restartsAfterAnInjectedError() throws {
        let (controller, events) = failedOnce("restarting", delay: 0.2, error: "drill: the camera fell off")
        #expect(
            events.waitFor(10) {
                if case .recovered(1) = $0 { return true }
                return false
            })
        let log = events.all
        #expect(
            log.contains {
                if case .error(let m, _) = $0 { return m.contains("drill: the camera fell off") }
                return false
            })
        #expect(
            log.contains {
                if case .reconnecting(1, 0.2, let reason) = $0 { return reason.contains("drill") }
                return false
            })
        // Scanning goes on in the new pipeline: codes appear again after the recovery.
        let recoveredAt = try #require(
            log.firstIndex {
                if case .recovered = $0 { return true }
                return false
            })
        #expect(events.waitFor(10) { _ in events.all[recoveredAt...].contains(where: Self.isAppeared) })
        #expect(controller.stop())
        #expect(controller.state == .stopped)
    }

    /// A stop asked for while the controller waits between attempts ends that wait: it does not sit out a minute's
    /// backoff.
    @Test func aStopEndsTheWaitBetweenAttempts() throws {
        let (controller, events) = failedOnce("backing-off", delay: 60, error: "drill: unplugged")
        #expect(
            events.waitFor(10) {
                if case .reconnecting(1, 60, _) = $0 { return true }
                return false
            })
        controller.requestStop()
        #expect(controller.wait(timeout: 10), "still waiting out its 60 s backoff 10 s after the stop")
        #expect(!events.all.contains { if case .recovered = $0 { return true } else { return false } })
    }

    @Test func neverPolicyEndsOnTheError() throws {
        let events = Collector()
        let controller = ScanController(
            name: "fragile", configuration: Self.liveDemo(), restart: .never, observer: events.observe)
        controller.start()
        #expect(events.waitFor(10, Self.isAppeared))
        controller.injectError("drill")
        #expect(controller.wait(timeout: 10))
        guard case .failed(let reason) = controller.state else {
            Issue.record("state \(controller.state)")
            return
        }
        #expect(reason.contains("drill"))
    }

    @Test func stopFinishesTheRecording() throws {
        let path = Media.folder.appendingPathComponent("controller-stop.mp4").path
        var c = Self.liveDemo()
        c.recording = try Recording(path: path)
        let events = Collector()
        let controller = ScanController(name: "recording", configuration: c, observer: events.observe)
        controller.start()
        #expect(events.waitFor(10, Self.isAppeared))
        // A second and a half of frames into the recording (through the tee, which feeds it), then the stop.
        #expect(pollUntil(30) { framesThroughTheTee(controller) >= 45 }, "\(framesThroughTheTee(controller)) frames")
        #expect(controller.stop(timeout: 15))
        #expect(controller.state == .stopped)
        let summary = try #require(controller.summary)
        let recorded = summary.frames
        // What a 30 frames/s source gave in the run's time: the most the tee can have passed to the recording.
        let teed = Int(30 * summary.seconds) + 3
        // The file plays back, every frame up to the stop.
        var again = RunConfiguration()
        again.input = try InputSource.parse(path)
        again.viewfinder = .off
        let (replay, replayLog) = try runScan(again)
        // (On a loaded machine, or under a sanitizer, the live scanner drops frames it cannot keep up with; the
        // recording keeps them all: at least what was scanned, at most what the source gave.)
        let matches = replay.frames >= recorded - 2 && replay.frames <= teed + 2
        let least = Sanitizer.atLeast(30, "frames the live recording holds")
        #expect(replay.frames >= least && matches, "\(replay.frames): scanned \(recorded), teed \(teed)")
        #expect(replayLog.all.contains(where: Self.isAppeared))
    }

    @Test func symbologiesChangeWhilePlaying() throws {
        var c = Self.liveDemo()
        c.everyFrame = true
        let events = Collector()
        let controller = ScanController(name: "qr-only-later", configuration: c, observer: events.observe)
        controller.start()
        defer { controller.stop() }
        func types(_ events: ArraySlice<Event>) -> Set<String> {
            Set(
                events.compactMap {
                    if case .detection(_, _, let d, _) = $0 { return d.type }
                    return nil
                })
        }
        #expect(events.waitFor(10) { _ in types(events.all[...]).count >= 2 })
        controller.setDecoder(try ScannerSettings(["disable", "qrcode.enable"]))
        // Frames already past the tee may finish with the old settings; every frame numbered from `changed` on
        // came to the tee after the change (see pauseHoldsTheStreamAndResumeGoesOn for the count).
        let held = controller.ledgerCount ?? 0
        let changed = framesThroughTheTee(controller) + held
        func after() -> [Detection] {
            events.all.compactMap {
                if case .detection(let frame, _, let d, _) = $0, frame >= changed { return d }
                return nil
            }
        }
        // A second of frames (the QR code is in every one) scanned after the change.
        #expect(events.waitFor(30) { _ in after().count >= 30 }, "\(after().count) detections after the change")
        let later = Set(after().map(\.type))
        #expect(later == ["QR-Code"], "after the change: \(later)")
    }
}
