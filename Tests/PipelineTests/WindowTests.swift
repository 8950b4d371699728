import Barscope
import Foundation
import Synchronization
import Testing

/// `--display` under a real X server (Xvfb, started here): the window sink runs the live demo to the end.
@Suite(.serialized) struct WindowTests {
    @Test func liveDemoPlaysInAWindowUnderXvfb() throws {
        guard let xvfb = ["/usr/bin/Xvfb"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            Issue.record("Xvfb is missing: scripts/setup installs it (package xvfb)")
            return
        }
        // A display nobody uses (well away from :0, which a desktop may hold); Xvfb writes its number on
        // -displayfd once it accepts connections.
        let free =
            (100..<400).first {
                !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\($0)")
                    && !FileManager.default.fileExists(atPath: "/tmp/.X\($0)-lock")
            } ?? 399
        let server = Process()
        server.executableURL = URL(fileURLWithPath: xvfb)
        // -noreset: autovideosink probes sinks one after another; without it the server resets when a probe's
        // connection closes, and the next sink's connection can land in that reset.
        server.arguments = [":\(free)", "-displayfd", "1", "-noreset", "-screen", "0", "1280x800x24", "-nolisten", "tcp"]
        let ready = Pipe()
        server.standardOutput = ready
        let serverLog = Pipe()
        server.standardError = serverLog
        try server.run()
        let number = Mutex<String?>(nil)
        let announced = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let data = ready.fileHandleForReading.availableData
            number.withLock { $0 = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) }
            announced.signal()
        }
        let started = announced.wait(timeout: .now() + 15) == .success
        let display = ":" + (number.withLock { $0 } ?? "")
        defer {
            // Foundation starts children with SIGTERM blocked; SIGKILL always works.
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
            // A killed server leaves its socket and lock behind.
            let n = display.dropFirst()
            try? FileManager.default.removeItem(atPath: "/tmp/.X11-unix/X\(n)")
            try? FileManager.default.removeItem(atPath: "/tmp/.X\(n)-lock")
        }
        try #require(started && display.count > 1, "Xvfb did not start")
        // The tool itself, as a user runs it, with DISPLAY set for it alone (never this process's environment,
        // which other tests share).
        let tool = Process()
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.isExecutableFile(atPath: dir.appendingPathComponent("barscope").path),
            dir.path != "/"
        {
            dir.deleteLastPathComponent()
        }
        tool.executableURL = dir.appendingPathComponent("barscope")
        tool.arguments = ["run", "demo", "--display", "--frames", "45", "--size", "640x360", "--events", "-"]
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = display
        tool.environment = environment
        let out = Pipe(), err = Pipe()
        tool.standardOutput = out
        tool.standardError = err
        let start = Date()
        try tool.run()
        let events = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let messages = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        tool.waitUntilExit()
        let elapsed = Date().timeIntervalSince(start)
        if tool.terminationStatus != 0 {
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
            let log = String(decoding: serverLog.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            print("Xvfb on \(display) said: \(log)")
        }
        #expect(tool.terminationStatus == 0, "\(messages)")
        // The window plays at the frame rate (45 frames ≈ 1.5 s), frame-accurately: every frame scanned.
        #expect(elapsed >= 1.3, "took \(elapsed) s")
        #expect(events.contains(#""event":"eos","frames":45"#), "\(events.suffix(300))")
        #expect(!events.contains(#""event":"error""#))
    }
}
