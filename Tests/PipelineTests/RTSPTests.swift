import Barscope
import CBarscope
import CGStreamer
import CGStreamerRTSPServer
import CTestRTSPServer
import Foundation
import TestSupport
import Testing

/// A real RTSP server (gst-rtsp-server, the library's `RTSPServer`) on a free loopback port, in this process,
/// serving an H.264 clip of the demo source, optionally behind HTTP basic authentication.
func testRTSPServer(clip: String, port: Int = 0, credentials: (user: String, password: String)? = nil) throws
    -> RTSPServer
{
    // The clip path is the test's own temporary file, not user input.
    try RTSPServer(
        host: "127.0.0.1", port: port, path: "/demo",
        launch: "( filesrc location=\(clip) ! qtdemux ! h264parse ! rtph264pay name=pay0 pt=96 )", shared: false
    ) { server, factory in
        if let credentials { bs_test_rtsp_require_basic_auth(server, factory, credentials.user, credentials.password) }
    }
}

@Suite(.serialized, .suiteLimit) struct RTSPTests {
    /// Barscope scans the served stream over TCP and over UDP and finds the codes with the right text.
    @Test(arguments: ["tcp", "udp"])
    func scansAnRTSPStream(transport: String) throws {
        let clip = try Media.demoClip(DemoOptions(size: Size(width: 640, height: 360), fps: 30, frames: 60))
        let server = try testRTSPServer(clip: clip)
        #expect(server.port > 0)
        var c = RunConfiguration()
        c.input = try InputSource.parse(server.url)
        c.rtspTransport = transport
        c.rtspLatencyMs = 200
        let (summary, log) = try runScan(c)
        let seen = Set(
            log.all.compactMap { e -> String? in
                if case .appeared(_, _, let d, _) = e { return d.data }
                return nil
            })
        #expect(seen == ["https://barscope.dev/demo", "4006381333931", "BARSCOPE-128"], "over \(transport)")
        // 60 frames served: a late packet may cost a frame, no more.
        expectLiveFrames(summary, delivered: Sanitizer.atLeast(50))
        withExtendedLifetime(server) {}
    }

    /// A server that asks for credentials: the right ones scan; a wrong password and none at all fail with one
    /// line that says so and never shows the password.
    @Test func credentials() throws {
        let clip = try Media.demoClip(DemoOptions(size: Size(width: 640, height: 360), fps: 30, frames: 60))
        let server = try testRTSPServer(clip: clip, credentials: ("dock", "open-sesame"))
        let base = "127.0.0.1:\(server.port)/demo"
        var c = RunConfiguration()
        c.rtspTransport = "tcp"
        c.input = try InputSource.parse("rtsp://dock:open-sesame@\(base)")
        let (_, log) = try runScan(c)
        #expect(log.all.contains { if case .appeared = $0 { return true } else { return false } })
        #expect(!log.all.map(\.jsonLine).joined().contains("open-sesame"))
        for uri in ["rtsp://dock:wrong-guess@\(base)", "rtsp://\(base)"] {
            c.input = try InputSource.parse(uri)
            let start = Date()
            do {
                _ = try runScan(c)
                Issue.record("\(Redact.uri(uri)) was let in")
            } catch {
                let message = "\(error)"
                #expect(!message.contains("wrong-guess") && !message.contains("\n"), "\(message)")
                #expect(
                    message.contains(uri.contains("@") ? "wrong user name or password" : "asks for a user name"),
                    "\(message)")
                #expect(message.hasPrefix(Redact.uri(uri)), "\(message)")
            }
            #expect(Date().timeIntervalSince(start) < 30)
        }
        // Credentials apart from the URI (as BARSCOPE_RTSP_USER and BARSCOPE_RTSP_PASSWORD give them): the right
        // ones scan, a wrong password fails naming the user, never the password.
        c.input = try InputSource.parse("rtsp://\(base)")
        c.rtspCredentials = RTSPCredentials(user: "dock", password: "open-sesame")
        let (_, apart) = try runScan(c)
        #expect(apart.all.contains { if case .appeared = $0 { return true } else { return false } })
        c.rtspCredentials = RTSPCredentials(user: "dock", password: "wrong-guess")
        do {
            _ = try runScan(c)
            Issue.record("a wrong password from the environment was let in")
        } catch {
            #expect("\(error)".contains("wrong user name or password (user 'dock' from BARSCOPE_RTSP_USER"), "\(error)")
            #expect(!"\(error)".contains("wrong-guess"))
        }
        #expect(
            RTSPCredentials.fromEnvironment(["BARSCOPE_RTSP_USER": "u", "BARSCOPE_RTSP_PASSWORD": "p"])?.description
                == "u:***")
        #expect(RTSPCredentials.fromEnvironment([:]) == nil)
        withExtendedLifetime(server) {}
    }

    /// A stream whose H.264 has B-frames (x264's default, as from many cameras) records to MP4 and the
    /// recording plays back with its frames and codes. (It used to fail in mp4mux: "Could not multiplex stream".)
    @Test func recordsAnRTSPStreamWithBFrames() throws {
        let clip = try Media.demoClip(
            DemoOptions(size: Size(width: 640, height: 360), fps: 30, frames: 90), bFrames: true)
        let server = try testRTSPServer(clip: clip)
        let recording = Media.folder.appendingPathComponent("rtsp-bframes.mp4").path
        var c = RunConfiguration()
        c.input = try InputSource.parse(server.url)
        c.rtspTransport = "tcp"
        c.recording = try Recording(path: recording)
        let (summary, log) = try runScan(c)
        expectLiveFrames(summary, delivered: Sanitizer.atLeast(80))
        #expect(log.all.contains { if case .appeared = $0 { return true } else { return false } })

        var replay = RunConfiguration()
        replay.input = try InputSource.parse(recording)
        replay.viewfinder = .off
        let (played, playedLog) = try runScan(replay)
        // Every frame that came in is recorded, the ones the live scanner dropped too.
        #expect(played.frames == summary.framesIn, "the recording holds \(played.frames) frames of \(summary.framesIn)")
        let seen = Set(
            playedLog.all.compactMap { e -> String? in
                if case .appeared(_, _, let d, _) = e { return d.data }
                return nil
            })
        // The whole frame is scanned again, so the code outside the viewfinder may be read too.
        #expect(seen.isSuperset(of: ["https://barscope.dev/demo", "4006381333931", "BARSCOPE-128"]), "\(seen)")
        withExtendedLifetime(server) {}
    }

    /// A closed loopback port fails within a bounded time, with one line naming the URL (password hidden).
    @Test func closedPortFailsQuicklyWithoutThePassword() throws {
        var c = RunConfiguration()
        c.input = try InputSource.parse("rtsp://admin:s3cret@127.0.0.1:1/stream")
        let start = Date()
        #expect(throws: BarscopeError.self) { try runScan(c) }
        do { _ = try runScan(c) } catch {
            #expect(!"\(error)".contains("s3cret"))
            #expect("\(error)".contains("rtsp://admin:***@127.0.0.1:1/stream"))
        }
        #expect(Date().timeIntervalSince(start) < 30)
    }

    /// --serve-rtsp: a client in this test reads the served stream and decodes the codes from the annotated video.
    @Test func servesTheAnnotatedStream() throws {
        var producer = RunConfiguration()
        producer.input = .demo(DemoOptions(size: Size(width: 640, height: 360), fps: 30, frames: 0, live: true))
        producer.serveRTSP = "127.0.0.1:0/dock"  // port 0: any free one; the `serving` event gives the URL
        let served = Locked<String?>(nil)
        let producerRunner = ScanController(name: "producer", configuration: producer) { e in
            if case .serving(let url) = e { served.withLock { $0 = url } }
        }
        let producerDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? producerRunner.run()
            producerDone.signal()
        }
        defer {
            producerRunner.stop()
            _ = producerDone.wait(timeout: .now() + 15)
        }
        pollUntil(30) { served.withLock { $0 } != nil }
        let url = try #require(served.withLock { $0 }, "no serving event")
        #expect(url.hasPrefix("rtsp://127.0.0.1:") && url.hasSuffix("/dock"))

        var client = RunConfiguration()
        client.input = try InputSource.parse(url)
        client.rtspTransport = "tcp"
        let log = EventLog()
        let clientRunner = ScanController(name: "client", configuration: client) { log.append($0) }
        let clientDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? clientRunner.run()
            clientDone.signal()
        }
        func seen() -> Set<String> {
            Set(
                log.all.compactMap { e -> String? in
                    if case .appeared(_, _, let d, _) = e { return d.data }
                    return nil
                })
        }
        let all: Set = ["https://barscope.dev/demo", "4006381333931", "BARSCOPE-128"]
        // Until the client has read every code from the served video (or the deadline), then the stop.
        pollUntil(60) { seen().isSuperset(of: all) }
        clientRunner.stop()
        #expect(clientDone.wait(timeout: .now() + 15) == .success, "the client stops when asked")
        #expect(seen() == all)
    }

    /// The server keeps the session open but stops sending (its media's valve closes, as a camera that hangs):
    /// the watchdog notices within its 5 s, the pipeline is rebuilt, and the new session scans again.
    @Test func stalledStreamIsNoticedAndReconnected() throws {
        let clip = try Media.demoClip(DemoOptions(size: Size(width: 640, height: 360), fps: 30, frames: 300))
        let server = try RTSPServer(
            host: "127.0.0.1", port: 0, path: "/demo",
            launch:
                "( filesrc location=\(clip) ! qtdemux ! h264parse ! valve name=stall ! rtph264pay name=pay0 pt=96 )",
            shared: false
        ) { _, factory in bs_test_rtsp_track_valves(factory) }
        var c = RunConfiguration()
        c.input = try InputSource.parse(server.url)
        c.rtspTransport = "tcp"
        let log = EventLog()
        let control = ScanController(
            name: "stalled", configuration: c, restart: .onError,
            backoff: ReconnectPolicy(initialDelay: 1, maxAttempts: 3), condition: .networkStreamsThatPlayed
        ) { log.append($0) }
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? control.run()
            done.signal()
        }
        defer {
            control.requestStop()
            _ = done.wait(timeout: .now() + 20)
        }
        #expect(pollUntil(60) { log.all.map(\.name).contains("appeared") }, "codes before the stall")
        #expect(bs_test_rtsp_stall_newest() == 1)
        // When the last frame came, watched from here (the tee's count, looked at every 50 ms) until the watchdog
        // speaks: it must not speak before 5 s without a frame, however slow the machine (a loaded one only makes
        // it later). How soon after that it speaks is the tick's, the bus's and the scheduler's; the watchdog's own
        // timing is RunLoopTests' (watchdogFailsAStalledLiveSource), so here the bound is the wait's generous 15 s.
        var last = (frames: framesThroughTheTee(control), at: Date())
        let noticed = pollUntil(15) {
            let frames = framesThroughTheTee(control)
            if frames > last.frames { last = (frames, Date()) }
            return log.all.contains(where: { $0.name == "reconnecting" })
        }
        let silence = Date().timeIntervalSince(last.at)
        try #require(noticed, "no reconnecting event within 15 s of the stall (last frame \(silence) s ago)")
        // (0.5 s: frames are counted once scanned or dropped, a frame time or two after they arrive.)
        #expect(silence >= 4.5, "noticed \(silence) s after the last frame came (watchdog 5 s)")
        let reason = log.all.compactMap { e -> String? in
            if case .reconnecting(_, _, let reason) = e { return reason }
            return nil
        }.first
        #expect(reason == "\(server.url): no frame for 5 s (the stream stalled)")
        // Up to 60 s: with every other suite running beside it, the new session can be slow to send its first frames.
        pollUntil(60) {
            let names = log.all.map(\.name)
            guard let r = names.firstIndex(of: "recovered") else { return false }
            return names[r...].contains("appeared")
        }
        let names = log.all.map(\.name)
        let recovered = try #require(names.firstIndex(of: "recovered"), "\(names)")
        #expect(names[recovered...].contains("appeared"), "codes again after the reconnection")
        withExtendedLifetime(server) {}
    }

    /// The server goes away mid-stream and comes back on the same port: barscope rebuilds the pipeline after the
    /// backoff, says so in events, finds the codes again, and both recordings (before and after) play.
    @Test func reconnectsWhenTheServerComesBack() throws {
        // With B-frames, as from many cameras (recordsAnRTSPStreamWithBFrames has the details).
        let long = try Media.demoClip(DemoOptions(size: Size(width: 640, height: 360), fps: 30, frames: 300))
        let short = try Media.demoClip(DemoOptions(size: Size(width: 640, height: 360), fps: 30, frames: 60))
        var first: RTSPServer? = try testRTSPServer(clip: long)
        let port = first!.port
        let recording = Media.folder.appendingPathComponent("reconnect.mp4").path
        var c = RunConfiguration()
        c.input = try InputSource.parse("rtsp://127.0.0.1:\(port)/demo")
        c.rtspTransport = "tcp"
        c.recording = try Recording(path: recording)
        let log = EventLog()
        let done = DispatchSemaphore(value: 0)
        let outcome = Locked<String>("running")
        let control = ScanController(
            name: "reconnect", configuration: c, restart: .onError,
            backoff: ReconnectPolicy(initialDelay: 1, maxAttempts: 8), condition: .networkStreamsThatPlayed
        ) { log.append($0) }
        Thread.detachNewThread {
            do {
                _ = try control.run()
                outcome.withLock { $0 = "ended" }
            } catch {
                outcome.withLock { $0 = "failed: \(error)" }
            }
            done.signal()
        }
        func ended() -> Bool { outcome.withLock { $0 } != "running" }
        // Codes, and a second and a half recorded (through the tee, which feeds the recording), before the outage.
        #expect(
            pollUntil(60) { log.all.map(\.name).contains("appeared") && framesThroughTheTee(control) >= 45 },
            "\(framesThroughTheTee(control)) frames before the outage")
        let outage = Date()
        first?.disconnectAll()
        first = nil
        // The server comes back once the client has noticed that it went.
        #expect(pollUntil(30) { log.all.map(\.name).contains("reconnecting") || ended() }, "the outage went unnoticed")
        let second = try testRTSPServer(clip: short, port: port)
        // Back: wait for codes after the recovery.
        pollUntil(60) {
            let names = log.all.map(\.name)
            if let r = names.firstIndex(of: "recovered"), names[r...].contains("appeared") { return true }
            return ended()
        }
        // A second and a half recorded after the outage (the short clip may end the run first), then the stop.
        pollUntil(30) { framesThroughTheTee(control) >= 45 || ended() }
        control.requestStop()
        #expect(done.wait(timeout: .now() + 20) == .success, "the run stops when asked")
        #expect(outcome.withLock { $0 } == "ended", "\(outcome.withLock { $0 })")
        let names = log.all.map(\.name)
        let reconnecting = log.all.compactMap { e -> (Int, Double)? in
            if case .reconnecting(let a, let d, _) = e { return (a, d) }
            return nil
        }
        #expect(reconnecting.first?.0 == 1 && reconnecting.first?.1 == 1, "first attempt after 1 s")
        #expect(names.contains("recovered"))
        #expect(Date().timeIntervalSince(outage) < 30)
        // Codes found before and after the outage.
        let recoveredAt = try #require(names.firstIndex(of: "recovered"))
        #expect(names[..<recoveredAt].contains("appeared") && names[recoveredAt...].contains("appeared"))
        // Both recordings play.
        for file in [recording, c.recording!.session(1).path] {
            var replay = RunConfiguration()
            replay.input = try InputSource.parse(file)
            let played = try runScan(replay).0.frames
            #expect(played > 20, "\(file) plays \(played) frames")
        }
        withExtendedLifetime(second) {}
    }
}
