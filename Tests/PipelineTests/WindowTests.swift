import Barscope
import Foundation
import Testing

/// `--display` under a real X server (Xvfb, started here): the window sink runs the live demo to the end.
@Suite(.serialized) struct WindowTests {
    @Test func liveDemoPlaysInAWindowUnderXvfb() throws {
        guard let xvfb = ["/usr/bin/Xvfb"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            Issue.record("Xvfb is missing: scripts/setup installs it (package xvfb)")
            return
        }
        // A display number nobody uses, then wait for the server's socket rather than guessing a delay.
        let number =
            (90..<190).first {
                !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\($0)")
                    && !FileManager.default.fileExists(atPath: "/tmp/.X\($0)-lock")
            } ?? 99
        let display = ":\(number)"
        let server = Process()
        server.executableURL = URL(fileURLWithPath: xvfb)
        server.arguments = [display, "-screen", "0", "1280x800x24", "-nolisten", "tcp"]
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            // Foundation starts children with SIGTERM blocked; SIGKILL always works.
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
            // A killed server leaves its socket and lock behind.
            try? FileManager.default.removeItem(atPath: "/tmp/.X11-unix/X\(number)")
            try? FileManager.default.removeItem(atPath: "/tmp/.X\(number)-lock")
        }
        let socket = "/tmp/.X11-unix/X\(number)"
        for _ in 0..<100 where !FileManager.default.fileExists(atPath: socket) { Thread.sleep(forTimeInterval: 0.1) }
        try #require(FileManager.default.fileExists(atPath: socket) && server.isRunning, "Xvfb did not start on \(display)")
        setenv("DISPLAY", display, 1)
        defer { unsetenv("DISPLAY") }

        var c = RunConfiguration()
        c.input = .demo(DemoOptions(size: Size(width: 640, height: 360), fps: 30, frames: 45, live: true))
        c.display = true
        let start = Date()
        let (summary, log) = try runScan(c)
        let elapsed = Date().timeIntervalSince(start)
        #expect(summary.frames >= 40, "live: the scanner may skip a frame, not many")
        // Live at 30 frames/s: 45 frames take about 1.5 s, not "as fast as possible".
        #expect(elapsed >= 1.3, "took \(elapsed) s")
        #expect(!log.all.contains { if case .error = $0 { return true } else { return false } })
    }
}
