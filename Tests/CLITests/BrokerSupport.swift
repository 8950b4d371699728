import Barscope
import Foundation
import TestSupport
import Testing

/// A real `mosquitto` (Debian's package, installed by scripts/setup), started by the test on a free loopback port
/// with a configuration and a folder of its own; stopped and started again for outages.
final class Broker: @unchecked Sendable {
    let port: Int
    let folder: String
    private let config: String
    private var process: Process? = nil

    /// - Parameters:
    ///   - persistence: whether it keeps sessions and queued messages across its own restarts.
    ///   - users: user → password; then anonymous clients are refused.
    init(persistence: Bool = true, users: [String: String] = [:], port: Int? = nil) throws {
        self.port = port ?? Self.freePort()
        folder = Tool.folder.appendingPathComponent("broker-\(UUID().uuidString)").path + "/"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var lines = [
            "listener \(self.port) 127.0.0.1", "persistence \(persistence)", "persistence_location \(folder)",
            "max_queued_messages 0", "log_dest stderr",
        ]
        if users.isEmpty {
            lines.append("allow_anonymous true")
        } else {
            let file = folder + "passwords"
            _ = FileManager.default.createFile(atPath: file, contents: Data())
            for (user, password) in users {
                _ = try Tool.shell("mosquitto_passwd -b '\(file)' '\(user)' '\(password)' 2>/dev/null")
            }
            lines += ["allow_anonymous false", "password_file \(file)"]
        }
        config = folder + "mosquitto.conf"
        try (lines.joined(separator: "\n") + "\n").write(toFile: config, atomically: true, encoding: .utf8)
        try start()
    }

    var url: String { "mqtt://127.0.0.1:\(port)" }

    func start() throws {
        let p = Process()
        // Children of the test process start with SIGTERM blocked: unblocked here, so that a stop is mosquitto's
        // clean shutdown (which writes its persistence), not a kill.
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = [
            "-c",
            "import os, signal, sys; signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT]); "
                + "os.execv(sys.argv[1], sys.argv[1:])",
            "/usr/sbin/mosquitto", "-c", config,
        ]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try p.run()
        process = p
        // Ready when the port accepts.
        guard pollUntil(10, every: 0.02, { Self.accepts(port) }) else {
            throw NotReady(description: "mosquitto on port \(port): not accepting in 10 s")
        }
    }

    /// A broker or subscriber that did not get ready in time.
    struct NotReady: Error, CustomStringConvertible {
        var description: String
    }

    func stop() {
        guard let p = process, p.isRunning else { return }
        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        process = nil
    }

    deinit {
        if let p = process, p.isRunning { kill(p.processIdentifier, SIGKILL) }
    }

    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) }
        }
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = UInt16(port).bigEndian
        return withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

/// `mosquitto_sub` with a persistent session (a fixed client id, no clean start) at QoS 1: every message it gets,
/// as (topic, payload), but the probes that told it was subscribed.
final class Subscriber: @unchecked Sendable {
    private let process = Process()
    private let lines: OutputLines
    /// The payloads of this test process's readiness probes start so (`messages` leaves them out).
    static let probePrefix = "barscope-readiness-probe-"

    init(_ broker: Broker, topic: String, id: String) throws {
        // SIGTERM unblocked (children of the test start with it blocked) and standard output line-buffered: a stop
        // is mosquitto_sub's clean exit, with every message it took written out.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            "-c",
            "import os, signal, sys; signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT]); "
                + "os.execvp(sys.argv[1], sys.argv[1:])",
            "stdbuf", "-oL", "mosquitto_sub", "-h", "127.0.0.1", "-p", String(broker.port), "-t", topic, "-q", "1",
            "-c", "-i", id, "-v",
        ]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        lines = OutputLines(out.fileHandleForReading)
        // Ready once it takes a message: mosquitto_sub subscribes a moment after it starts, and what is published
        // before is not its. A probe on a topic its filter matches (each wildcard level named), sent again every
        // half second until one arrives.
        let probeTopic = topic.split(separator: "/").map { $0 == "+" || $0 == "#" ? "probe" : String($0) }
            .joined(separator: "/")
        let probe = Self.probePrefix + UUID().uuidString
        let deadline = Date(timeIntervalSinceNow: 20)
        var ready = false
        while !ready && Date() < deadline && process.isRunning {
            let sent = try Tool.shell(
                "mosquitto_pub -h 127.0.0.1 -p \(broker.port) -q 1 -t '\(probeTopic)' -m '\(probe)'")
            ready = sent == 0 && lines.waitFor(0.5) { $0.hasSuffix(" " + probe) } != nil
        }
        guard ready else {
            throw Broker.NotReady(
                description: "mosquitto_sub on \(topic) took no probe on \(probeTopic) in 20 s"
                    + " (running: \(process.isRunning)); it printed: \(lines.all.suffix(3))")
        }
    }

    var messages: [(topic: String, payload: String)] {
        lines.all.compactMap { line in
            guard let space = line.firstIndex(of: " ") else { return nil }
            let payload = String(line[line.index(after: space)...])
            return payload.hasPrefix(Self.probePrefix) ? nil : (String(line[..<space]), payload)
        }
    }

    func waitFor(_ seconds: Double, _ done: ([(topic: String, payload: String)]) -> Bool) -> Bool {
        pollUntil(seconds, every: 0.1) { done(messages) }
    }

    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        // The reader has every line once mosquitto_sub's output has ended.
        let ended = lines.waitForEnd(10).count
        if !lines.hasEnded { Issue.record("mosquitto_sub's output still open 10 s after it stopped (\(ended) lines)") }
    }

    deinit { stop() }
}
