import Foundation

public struct XServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// A real X server for one test: Xvfb on a display nobody uses, killed (and its files removed) at the end.
public final class XServer {
    public let display: String
    private let server: Process
    private let log: Pipe

    public init() throws {
        guard let xvfb = ["/usr/bin/Xvfb"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XServerError("Xvfb is missing: scripts/setup installs it (package xvfb)")
        }
        // A display nobody uses (well away from :0, which a desktop may hold); Xvfb writes its number on
        // -displayfd once it accepts connections.
        let free =
            (100..<400).first {
                !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\($0)")
                    && !FileManager.default.fileExists(atPath: "/tmp/.X\($0)-lock")
            } ?? 399
        server = Process()
        server.executableURL = URL(fileURLWithPath: xvfb)
        // -noreset: autovideosink probes sinks one after another; without it the server resets when a probe's
        // connection closes, and the next sink's connection can land in that reset.
        server.arguments = [
            ":\(free)", "-displayfd", "1", "-noreset", "-screen", "0", "1280x800x24", "-nolisten", "tcp",
        ]
        let ready = Pipe()
        server.standardOutput = ready
        log = Pipe()
        server.standardError = log
        try server.run()
        // The reading thread writes the number before it signals; it is read only after the signal.
        final class Announcement: @unchecked Sendable { var number = "" }
        let announcement = Announcement()
        let announced = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let data = ready.fileHandleForReading.availableData
            announcement.number = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            announced.signal()
        }
        let started = announced.wait(timeout: .now() + 15) == .success
        display = ":" + (started ? announcement.number : "")
        guard started && display.count > 1 else {
            stop()
            throw XServerError("Xvfb did not start")
        }
    }

    /// What the server said (after `stop`).
    public var messages: String { String(decoding: log.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }

    public func stop() {
        guard server.isRunning else { return }
        // Foundation starts children with SIGTERM blocked; SIGKILL always works.
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
        // A killed server leaves its socket and lock behind.
        let n = display.dropFirst()
        try? FileManager.default.removeItem(atPath: "/tmp/.X11-unix/X\(n)")
        try? FileManager.default.removeItem(atPath: "/tmp/.X\(n)-lock")
    }

    /// The whole screen as RGB bytes, through GStreamer's ximagesrc (and a PNG of it at `png`, to look at).
    public func screenshot(png: String) throws -> (pixels: [UInt8], width: Int, height: Int) {
        let raw = png + ".rgb"
        for (format, path) in [("RGB", raw), ("png", png)] {
            let shot = Process()
            shot.executableURL = URL(fileURLWithPath: "/usr/bin/gst-launch-1.0")
            let sink =
                format == "png"
                ? "pngenc ! filesink location=\(path)" : "video/x-raw,format=RGB ! filesink location=\(path)"
            shot.arguments =
                ["-q"]
                + "ximagesrc display-name=\(display) num-buffers=1 use-damage=false ! videoconvert ! \(sink)"
                .split(separator: " ").map(String.init)
            try shot.run()
            shot.waitUntilExit()
        }
        let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: raw)))
        return (data, 1280, 800)
    }

    deinit { stop() }
}
