import Barscope
import Foundation
import TestSupport
import Testing

/// Nothing from an argument or a pipeline file reaches a shell or a launch string; listeners stay on loopback;
/// passwords never show.
@Suite(.serialized, .suiteLimit) struct SecurityTests {
    /// A launch-string fragment as the input, as a pipeline file's input, as a recording path and as the events
    /// path: each is taken as one name that does not exist, and the file the fragment would write never appears.
    @Test func launchFragmentsAndShellSyntaxAreOnlyNames() throws {
        let dir = Tool.folder.appendingPathComponent("injection-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let pwned = dir.appendingPathComponent("pwned").path
        let clip = dir.appendingPathComponent("clip.mp4").path
        let input = "\(clip) ! filesink location=\(pwned)"
        let direct = try Tool.run(["run", input, "--quiet"])
        #expect(direct.status == 2)
        #expect(direct.stderr == "barscope: \(input): no such file\n")

        let conf = dir.appendingPathComponent("evil.conf").path
        try "[source]\ninput = \(input)\n".write(toFile: conf, atomically: true, encoding: .utf8)
        let fromFile = try Tool.run(["run", conf, "--quiet"])
        #expect(fromFile.status == 2)
        #expect(fromFile.stderr == "barscope: \(conf): [source] input: \(input): no such file\n")

        let record = "x.mp4 ! filesink location=\(pwned).mp4"
        let recording = try Tool.run(["run", "demo", "--frames", "5", "--record", record, "--quiet"])
        #expect(recording.status == 2)
        #expect(
            recording.stderr
                == "barscope: \(record): cannot record (no such folder 'x.mp4 ! filesink location=\(dir.path)')\n")

        let events = "\(dir.path)/events.jsonl; touch \(pwned)"
        let shell = try Tool.run(["run", "demo", "--frames", "5", "--size", "320x240", "--events", events, "--quiet"])
        // A path whose folder ("events.jsonl; touch DIR") does not exist.
        #expect(shell.status == 2)
        #expect(shell.stderr == "barscope: \(events): cannot write events (No such file or directory)\n")
        for p in [pwned, pwned + ".mp4"] { #expect(!FileManager.default.fileExists(atPath: p), "\(p) was created") }
    }

    /// `--serve-rtsp :0/dock` names no host: the server listens on 127.0.0.1 only (checked in /proc/net/tcp).
    @Test func servedStreamListensOnLoopbackByDefault() throws {
        let p = Process()
        p.executableURL = Tool.url
        p.arguments = [
            "run", "demo", "--live", "--frames", "60", "--size", "320x240", "--serve-rtsp", ":0/dock", "--quiet",
        ]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { p.waitUntilExit() }
        let first =
            String(decoding: out.fileHandleForReading.availableData, as: UTF8.self).split(separator: "\n").first ?? ""
        let event = try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any], "\(first)")
        let url = try #require(event["url"] as? String, "\(first)")
        #expect(url.hasPrefix("rtsp://127.0.0.1:") && url.hasSuffix("/dock"), "\(url)")
        let port = try #require(Int(url.dropFirst("rtsp://127.0.0.1:".count).prefix { $0.isNumber }))
        // /proc/net/tcp: local address as hex IP:port, state 0A = LISTEN.
        let hexPort = String(format: "%04X", port)
        let table = try String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)
        var listening: [String] = []
        for line in table.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            if fields.count > 3 && fields[1].hasSuffix(":" + hexPort) && fields[3] == "0A" {
                listening.append(fields[1])
            }
        }
        #expect(listening == ["0100007F:\(hexPort)"], "\(listening)")
        let tcp6 = (try? String(contentsOfFile: "/proc/net/tcp6", encoding: .utf8)) ?? ""
        #expect(!tcp6.contains(":\(hexPort) 00000000000000000000000000000000:0000 0A"), "not on every IPv6 address")
        _ = out.fileHandleForReading.readDataToEndOfFile()
    }

    /// A stream with a password, stopped by SIGINT: the summary line and every event name the stream with the
    /// password hidden.
    @Test func passwordNeverShowsInSummaryOrEvents() throws {
        let clip = Tool.folder.appendingPathComponent("secure-clip.mp4").path
        try DemoClip.writeMP4(to: clip, options: DemoOptions(size: Size(width: 320, height: 240), frames: 300))
        let server = try RTSPServer(
            host: "127.0.0.1", port: 0, path: "/demo",
            launch: "( filesrc location=\(clip) ! qtdemux ! h264parse ! rtph264pay name=pay0 pt=96 )", shared: false)
        let uri = "rtsp://dock:open-sesame-42@127.0.0.1:\(server.port)/demo"
        let p = Process()
        p.executableURL = Tool.url
        p.arguments = ["run", uri, "--rtsp-transport", "tcp"]
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        let lines = OutputLines(out.fileHandleForReading)
        // The stream plays and codes come: then the signal, and the summary.
        #expect(lines.waitFor(60) { $0.contains(#""event":"appeared""#) } != nil, "no code in a minute")
        kill(p.processIdentifier, SIGINT)
        try #require(waitForExit(p, 30, "an RTSP run after SIGINT"))
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stdout = lines.waitForEnd(30).joined(separator: "\n")
        #expect(p.terminationStatus == 130)
        #expect(stdout.contains(#""event":"appeared""#))
        // The summary line names the stream with its password hidden (after the warning that the run is stopping).
        #expect(
            stderr.split(separator: "\n").contains {
                $0.hasPrefix("barscope: rtsp://dock:***@127.0.0.1:\(server.port)/demo: ")
            },
            "\(stderr)")
        #expect(!(stdout + stderr).contains("open-sesame-42"))
        withExtendedLifetime(server) {}
    }
}
