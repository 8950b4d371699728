import Foundation
import Testing

/// Every `barscope` command line the README's shell blocks and the commands' `--help` texts show, found by reading
/// them (an example added later is run without being listed here), run as a user would on media of the test's own:
/// `clip.mp4` is a generated demo clip, `label.png` and `photo.jpg` ZBar's example images, every file written goes to
/// a folder of the test's. Each must exit 0 (4 for `scan` with no code) within its time. An example that needs what
/// this machine lacks (a camera, a remote stream or broker, a window, a long-running service) is listed as skipped
/// with its reason; the service's routes are run by ServeTests and ControlTableTests.
@Suite(.serialized) struct DocumentedExamplesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")
        .standardized

    /// The example command lines: `barscope ...` (or `scripts/barscope ...`) in the README's sh blocks, and the
    /// `barscope ...` lines of every `--help`, with comments and placeholders' alternatives cut.
    static func examples() throws -> [(source: String, line: String)] {
        var out: [(String, String)] = []
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        var inShell = false
        for raw in readme.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(raw)
            if line.hasPrefix("```") {
                inShell = line == "```sh" && !inShell
                continue
            }
            guard inShell else { continue }
            var command = line.trimmingCharacters(in: .whitespaces)
            if command.hasPrefix("scripts/barscope ") { command = String(command.dropFirst("scripts/".count)) }
            guard command.hasPrefix("barscope ") else { continue }
            out.append(("README", strip(command)))
        }
        for sub in ["", "run", "scan", "serve", "generate", "pipelines"] {
            let help = try Tool.run((sub.isEmpty ? [] : [sub]) + ["--help"])
            for line in help.stdout.split(separator: "\n") {
                let text = line.trimmingCharacters(in: .whitespaces)
                // Usage lines name placeholders in capitals or brackets; examples name real values.
                guard text.hasPrefix("barscope "), !text.contains("["), !text.contains("..."),
                    text.range(of: #"\b[A-Z]{2,}\b"#, options: .regularExpression) == nil
                else { continue }
                out.append(("barscope \(sub) --help".replacingOccurrences(of: "  ", with: " "), strip(text)))
            }
        }
        return out
    }

    /// The command without its trailing comment (two or more spaces, then text), a trailing `&` or `\`.
    static func strip(_ line: String) -> String {
        var s = line
        if let r = s.range(of: #"\s{2,}\S.*$"#, options: .regularExpression) { s.removeSubrange(r) }
        if let r = s.range(of: #"\s+#.*$"#, options: .regularExpression) { s.removeSubrange(r) }
        s = s.trimmingCharacters(in: .whitespaces)
        if s.hasSuffix("&") || s.hasSuffix("\\") { s = String(s.dropLast()).trimmingCharacters(in: .whitespaces) }
        return s
    }

    /// Why an example cannot run here, or nil.
    static func skipReason(_ line: String) -> String? {
        if line.contains("/dev/video") { return "needs a camera" }
        if line.contains("rtsp://") {
            return "needs a camera's RTSP stream (RTSPTests run the same options on a served clip)"
        }
        if line.contains("--publish") { return "needs the named broker hosts (PublishTests run a local broker)" }
        if line.contains("--display") { return "opens a window (WindowTests run one under Xvfb)" }
        if line.hasPrefix("barscope serve") { return "a long-running service (ServeTests start it)" }
        return nil
    }

    @Test func everyRunnableExampleRuns() throws {
        let all = try Self.examples()
        #expect(all.count >= 20, "found only \(all.count) examples: \(all)")
        let folder = Tool.folder.appendingPathComponent("examples-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // The media the examples name.
        let clip = folder.appendingPathComponent("clip.mp4").path
        let made = try Tool.run(["generate", clip, "--size", "640x360", "--frames", "30"])
        #expect(made.status == 0, "\(made.stderr)")
        let zbar = Self.root.appendingPathComponent("Tests/Fixtures/zbar-examples")
        try? FileManager.default.copyItem(
            atPath: zbar.appendingPathComponent("ean-13.png").path,
            toPath: folder.appendingPathComponent("label.png").path)
        try? FileManager.default.copyItem(
            atPath: zbar.appendingPathComponent("qr-code.png").path,
            toPath: folder.appendingPathComponent("photo.jpg").path)
        var ran = 0
        var skipped: [String] = []
        for (source, line) in all {
            if let why = Self.skipReason(line) {
                skipped.append("\(line)  [\(source)]: \(why)")
                continue
            }
            var words = try Self.words(line)
            words.removeFirst()  // barscope
            // A live source runs until stopped: a second of it.
            if words.contains("--live"), let i = words.firstIndex(of: "--frames"), i + 1 < words.count {
                words[i + 1] = "30"
            }
            let p = Process()
            p.executableURL = Tool.url
            p.arguments = words
            p.currentDirectoryURL = folder
            p.standardOutput = FileHandle.nullDevice
            let err = Pipe()
            p.standardError = err
            try p.run()
            let deadline = Date(timeIntervalSinceNow: 120)
            while p.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }  // a child's time limit
            if p.isRunning { p.terminate() }
            p.waitUntilExit()
            let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let fine: Set<Int32> = words.first == "scan" ? [0, 4] : [0]
            #expect(fine.contains(p.terminationStatus), "\(line)  [\(source)]: exit \(p.terminationStatus): \(message)")
            ran += 1
        }
        print("documented examples: \(ran) run, \(skipped.count) skipped:\n  " + skipped.joined(separator: "\n  "))
        #expect(ran >= 10, "only \(ran) examples could run")
    }

    /// Shell words: spaces separate, single quotes keep.
    static func words(_ line: String) throws -> [String] {
        var out: [String] = []
        var current = ""
        var quoted = false
        var started = false
        for c in line {
            if c == "'" {
                quoted.toggle()
                started = true
            } else if c == " " && !quoted {
                if started { out.append(current) }
                current = ""
                started = false
            } else {
                current.append(c)
                started = true
            }
        }
        if started { out.append(current) }
        return out
    }
}
