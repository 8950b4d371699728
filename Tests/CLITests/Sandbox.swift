import Barscope
import Foundation
import TestSupport
import Testing

/// The place the examples run in, and what they need, made when first needed.
final class Sandbox {
    let folder: URL
    let clip: String
    var environment = ProcessInfo.processInfo.environment
    var ran: [String] = []
    var skipped: [String] = []
    var service: Service?
    /// An example's instance ID → the one this run's service gave.
    var ids: [String: String] = [:]
    /// The instance the `serve --help` routes work on, and the routes left for the end (stopping it).
    var routeInstance: String?
    var deferredRoutes: [(String, String, String?, String)] = []
    private var rtsp: RTSPServer?
    var display: XServer?
    /// A command reading a FIFO, started in the background; the next `echo ... > FIFO` lines feed it.
    var reader: (process: Process, command: String, source: String, events: String?)?

    init() throws {
        folder = Tool.folder.appendingPathComponent("examples-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        clip = folder.appendingPathComponent("clip.mp4").path
        let made = try Tool.run(["generate", clip, "--size", "640x360", "--frames", "60"])
        #expect(made.status == 0, "\(made.stderr)")
        let zbar = DocumentedExamplesTests.root.appendingPathComponent("Tests/Fixtures/zbar-examples")
        try FileManager.default.copyItem(
            atPath: zbar.appendingPathComponent("ean-13.png").path,
            toPath: folder.appendingPathComponent("label.png").path)
        try FileManager.default.copyItem(
            atPath: zbar.appendingPathComponent("qr-code.png").path,
            toPath: folder.appendingPathComponent("photo.jpg").path)
        // The named pipelines are the tree's (the ones whose comments are examples).
        environment["BARSCOPE_PIPELINES"] = DocumentedExamplesTests.root.appendingPathComponent("pipelines").path
    }

    func finish() {
        endBlock()
        if let service { #expect(service.terminate() == 0, "serve: \(service.stderr.suffix(400))") }
        display?.stop()
    }

    // MARK: Shell commands

    func run(_ command: DocumentedExamplesTests.Command, from source: String) throws {
        var words = DocumentedExamplesTests.words(command.text)
        guard let first = words.first else { return }
        switch first {
        case "barscope", "scripts/barscope":
            words.removeFirst()
            try barscope(words, command, source)
        case "curl":
            try curl(Array(words.dropFirst()), command, source)
        case "gst-launch-1.0", "gst-inspect-1.0":
            try gstreamer(words, command, source)
        case "export":
            // export NAME=$(scripts/barscope element-path): the folder of the plugin this suite built.
            let assignment = command.text.dropFirst("export ".count)
            guard let eq = assignment.firstIndex(of: "=") else { return unknown(command, source) }
            let name = String(assignment[..<eq])
            let value = String(assignment[assignment.index(after: eq)...])
            guard value.contains("element-path") else { return unknown(command, source) }
            environment[name] = Tool.url.deletingLastPathComponent().path
            ran.append(source)
        case "mkfifo":
            for path in words.dropFirst() {
                #expect(mkfifo(reroot(path), 0o600) == 0, "\(command.text)  [\(source)]: mkfifo failed")
            }
            ran.append(source)
        case "echo":
            try echo(command, source)
        case "mosquitto_sub":
            skipped.append("\(command.text)  [\(source)]: watches the broker the example before publishes to")
        case "scripts/test", "scripts/fuzz":
            skipped.append("\(command.text)  [\(source)]: the test suite and the fuzzers run themselves")
        case "scripts/soak":
            skipped.append("\(command.text)  [\(source)]: a soak of minutes (scripts/test runs its 3-minute version)")
        case "scripts/bench", "python3",
            _ where first.hasPrefix("BARSCOPE=") || first.hasPrefix("SCANBENCH"):
            // Benchmarks of minutes on ../shared/eval: scripts/test runs the kit's quick profile (bench_kit.py --gate).
            skipped.append("\(command.text)  [\(source)]: a benchmark (scripts/test runs the kit's quick profile)")
        default:
            unknown(command, source)
        }
    }

    func unknown(_ command: DocumentedExamplesTests.Command, _ source: String) {
        Issue.record("an example of a kind this test cannot run: \(command.text)  [\(source)]")
    }

    /// Absolute paths other than devices and the system's own go into the test's folder (`/run/dock1.ctl` →
    /// FOLDER/run/dock1.ctl), their parents made.
    func reroot(_ path: String) -> String {
        guard path.hasPrefix("/"), !path.hasPrefix("/dev/"), !path.hasPrefix("/usr/"), !path.hasPrefix("/proc/"),
            !path.hasPrefix(folder.path), !path.hasPrefix(Tool.folder.path)
        else { return path }
        let moved = folder.path + path
        try? FileManager.default.createDirectory(
            atPath: (moved as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        return moved
    }

    /// Every word's absolute paths rerooted, a `KEY=/path` value's too.
    func rerootWords(_ words: [String]) -> [String] {
        words.map { word in
            if word.hasPrefix("/") { return reroot(word) }
            if let eq = word.firstIndex(of: "="), word[word.index(after: eq)...].hasPrefix("/") {
                return String(word[...eq]) + reroot(String(word[word.index(after: eq)...]))
            }
            return word
        }
    }

    /// A camera's RTSP stream, as the test's own server of the clip (the example's credentials kept).
    func localRTSP(_ uri: String) throws -> String {
        if rtsp == nil {
            // Ten seconds of stream: a run shows its codes and is stopped before the stream ends (a camera's
            // stream that ends is reconnected).
            let stream = folder.appendingPathComponent("stream.mp4").path
            let made = try Tool.run(["generate", stream, "--size", "640x360", "--frames", "300"])
            #expect(made.status == 0, "\(made.stderr)")
            rtsp = try RTSPServer(
                host: "127.0.0.1", port: 0, path: "/camera",
                launch: "( filesrc location=\(stream) ! qtdemux ! h264parse ! rtph264pay name=pay0 pt=96 )",
                shared: false)
        }
        let rest = uri.dropFirst("rtsp://".count)
        let user = rest.split(separator: "/").first.flatMap { $0.contains("@") ? $0.split(separator: "@").first : nil }
        return "rtsp://" + (user.map { "\($0)@" } ?? "") + "127.0.0.1:\(rtsp!.port)/camera"
    }

    /// The named pipeline a `run` line runs, if any, as its file's text.
    func pipelineText(_ name: String) -> String? {
        let file = DocumentedExamplesTests.root.appendingPathComponent("pipelines/\(name).conf")
        return try? String(contentsOf: file, encoding: .utf8)
    }

    /// The end of a shell block: a background reader of commands shows what they did (the cycle they opened and
    /// closed is in its events), then is stopped as a user stops it (SIGINT: exit 130, events ending in `eos`).
    func endBlock() {
        guard let r = reader else { return }
        reader = nil
        let events = { r.events.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? "" }
        pollUntil(30) { !r.process.isRunning || events().contains(#""event":"cycle""#) }
        #expect(
            events().contains(#""event":"cycle""#), "\(r.command)  [\(r.source)]: no cycle in \(events().suffix(300))")
        if r.process.isRunning { kill(r.process.processIdentifier, SIGINT) }
        pollUntil(30) { !r.process.isRunning }
        if r.process.isRunning { kill(r.process.processIdentifier, SIGKILL) }
        r.process.waitUntilExit()
        #expect(r.process.terminationStatus == 130, "\(r.command)  [\(r.source)]: exit \(r.process.terminationStatus)")
        #expect(events().contains(#""event":"eos""#), "\(r.command)  [\(r.source)]: no eos in \(events().suffix(300))")
    }

    func skip(_ line: String, _ source: String, _ why: String) {
        skipped.append("\(line)  [\(source)]: \(why)")
    }
}
