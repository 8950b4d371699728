import Barscope
import Foundation
import TestSupport
import Testing

/// Every example the documentation shows, found by reading it, so that an example added later is run without being
/// listed here: the shell and key-file blocks of the README and of every file in `docs/`, the `barscope` lines of
/// every `--help`, the routes `serve --help` lists, and the command lines in the comments of `pipelines/*.conf`.
///
/// Each runs as a user would run it, on media of the test's own: `clip.mp4` (a generated demo clip), `label.png` and
/// `photo.jpg` (ZBar's example images), an RTSP server of the test's serving a clip wherever an example names a
/// camera's stream, an X server (Xvfb) for a window, `barscope serve` on a free port for the HTTP calls, and every
/// absolute path rerooted into the test's folder. Each must exit 0 and give a result that fits it: the events it
/// prints are JSON Lines ending in `eos`, every file it writes is what its name says (a video that plays, JSON Lines,
/// an image), an answer has the fields its comment names, a control command's event follows. An example that
/// needs what this machine lacks is listed as skipped with its reason; one of a kind this test cannot run fails it.
@Suite(.serialized, .suiteLimit) struct DocumentedExamplesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")
        .standardized

    /// One shell command of an example: its text and the comment that follows it (what it promises).
    struct Command {
        var text: String
        var comment: String
    }

    enum Kind {
        /// A shell block's commands, in order (a later one may use what an earlier one started).
        case shell([Command])
        /// A pipeline file, with the name its own example runs it by.
        case keyFile(String)
        /// A route of `serve --help`: method, path, body.
        case route(String, String, String?)
    }

    struct Example {
        var source: String
        var kind: Kind
    }

    // MARK: Finding the examples

    static func examples() throws -> [Example] {
        var out: [Example] = []
        var documents = ["README.md"]
        let docs = root.appendingPathComponent("docs")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: docs.path)) ?? [] where name.hasSuffix(".md")
        {
            documents.append("docs/" + name)
        }
        for document in documents.sorted() {
            let text = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
            var block: [String]? = nil
            var language = ""
            var start = 0
            for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let line = String(raw)
                if line.hasPrefix("```") {
                    if let lines = block {
                        let source = "\(document):\(start)"
                        if language == "sh" { out.append(Example(source: source, kind: .shell(commands(lines)))) }
                        if language == "ini" {
                            out.append(Example(source: source, kind: .keyFile(lines.joined(separator: "\n"))))
                        }
                        block = nil
                    } else {
                        language = String(line.dropFirst(3))
                        block = []
                        start = n + 1
                    }
                    continue
                }
                block?.append(line)
            }
        }
        for sub in ["", "run", "scan", "search", "index", "serve", "generate", "validate", "pipelines"] {
            let help = try Tool.run((sub.isEmpty ? [] : [sub]) + ["--help"])
            let source = "barscope \(sub) --help".replacingOccurrences(of: "  ", with: " ")
            for line in help.stdout.split(separator: "\n") {
                let text = line.trimmingCharacters(in: .whitespaces)
                // Usage lines name placeholders in capitals or brackets; examples name real values.
                // The help's comment follows the command after two or more spaces.
                let command = text.components(separatedBy: "  ").first ?? text
                if command.hasPrefix("barscope "), !command.contains("["), !command.contains("..."),
                    command.range(of: #"\b[A-Z]{2,}\b"#, options: .regularExpression) == nil
                {
                    out.append(Example(source: source, kind: .shell(commands([command]))))
                }
                // serve's API lines: METHOD /path [description, with the body as JSON]
                if let m = text.firstMatch(of: /^(GET|POST|DELETE)\s+(\/\S*)\s*(.*)$/) {
                    // The body before the answer (`{...} -> 201 {...}`).
                    let request = m.3.components(separatedBy: "->").first ?? ""
                    let body = request.firstMatch(of: /\{.*\}/).map { String($0.0) }
                    out.append(Example(source: source, kind: .route(String(m.1), String(m.2), body)))
                }
            }
        }
        let pipelines = root.appendingPathComponent("pipelines")
        for name in try FileManager.default.contentsOfDirectory(atPath: pipelines.path).sorted()
        where name.hasSuffix(".conf") {
            let text = try String(contentsOf: pipelines.appendingPathComponent(name), encoding: .utf8)
            let lines = exampleLines(inComments: text)
            if !lines.isEmpty {
                out.append(Example(source: "pipelines/\(name)", kind: .shell(commands(lines))))
            }
        }
        return out
    }

    /// The command lines of a key file's comments: `#   barscope ...` (comment lines indented as examples).
    static func exampleLines(inComments text: String) -> [String] {
        text.split(separator: "\n").compactMap { line in
            guard let m = line.firstMatch(of: /^#\s{2,}((?:barscope|curl|gst-launch-1\.0) .*)$/) else { return nil }
            return String(m.1)
        }
    }

    /// A shell block's commands: continuation lines joined, each command's trailing comment kept apart, comment-only
    /// lines (prose) dropped, `a; b` split.
    static func commands(_ lines: [String]) -> [Command] {
        var out: [Command] = []
        var pending = ""
        for line in lines {
            let (code, comment) = splitComment(line)
            var text = code.trimmingCharacters(in: .whitespaces)
            if text.isEmpty {
                // A comment continuing the one above it.
                if !comment.isEmpty, pending.isEmpty, !out.isEmpty, line.first == " " {
                    out[out.count - 1].comment += " " + comment
                }
                continue
            }
            let continues = text.hasSuffix("\\")
            if continues { text = String(text.dropLast()).trimmingCharacters(in: .whitespaces) }
            pending += (pending.isEmpty ? "" : " ") + text
            if continues { continue }
            for part in splitOutsideQuotes(pending, on: ";") {
                out.append(Command(text: part.trimmingCharacters(in: .whitespaces), comment: comment))
            }
            pending = ""
        }
        return out
    }

    /// The code and the comment of a shell line: `#` after a space, outside quotes.
    static func splitComment(_ line: String) -> (String, String) {
        var quote: Character? = nil
        var previous: Character = " "
        for (i, c) in zip(line.indices, line) {
            if let q = quote {
                if c == q { quote = nil }
            } else if c == "'" || c == "\"" {
                quote = c
            } else if c == "#" && (previous == " " || i == line.startIndex) {
                return (
                    String(line[..<i]),
                    String(line[line.index(after: i)...]).trimmingCharacters(in: .whitespaces)
                )
            }
            previous = c
        }
        return (line, "")
    }

    static func splitOutsideQuotes(_ text: String, on separator: Character) -> [String] {
        var parts: [String] = []
        var current = ""
        var quote: Character? = nil
        for c in text {
            if let q = quote {
                if c == q { quote = nil }
            } else if c == "'" || c == "\"" {
                quote = c
            } else if c == separator {
                parts.append(current)
                current = ""
                continue
            }
            current.append(c)
        }
        parts.append(current)
        return parts.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
    }

    /// Shell words: spaces separate, single and double quotes keep.
    static func words(_ line: String) -> [String] {
        var out: [String] = []
        var current = ""
        var quote: Character? = nil
        var started = false
        for c in line {
            if let q = quote {
                if c == q { quote = nil } else { current.append(c) }
            } else if c == "'" || c == "\"" {
                quote = c
                started = true
            } else if c == " " {
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

    // MARK: Running them

    @Test func everyDocumentedExampleRunsAndDoesWhatItSays() throws {
        let all = try Self.examples()
        let sandbox = try Sandbox()
        defer { sandbox.finish() }
        for example in all {
            switch example.kind {
            case .shell(let commands):
                for command in commands { try sandbox.run(command, from: example.source) }
                sandbox.endBlock()
            case .keyFile(let text):
                try sandbox.keyFile(text, from: example.source)
            case .route(let method, let path, let body):
                try sandbox.route(method, path, body, from: example.source)
            }
        }
        try sandbox.deleteRoutes()
        let counts = Dictionary(grouping: sandbox.ran, by: { $0 }).mapValues(\.count).sorted { $0.key < $1.key }
        print(
            "documented examples run, by source: "
                + counts.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                + "\nskipped (\(sandbox.skipped.count)):\n  " + sandbox.skipped.joined(separator: "\n  "))
        #expect(sandbox.ran.count >= 30, "only \(sandbox.ran.count) examples ran")
        #expect(sandbox.ran.contains { $0.hasPrefix("pipelines/") } && sandbox.ran.contains { $0.hasPrefix("README") })
    }

    /// Finding examples: continuation lines, comments and `;` as a shell reads them.
    @Test func commandsAreReadAsTheShellReadsThem() {
        let c = Self.commands([
            "barscope run a \\", "    --b 'x # y' # what it does", "                 # and more", "# prose",
            "echo \"1\" > f; echo 2 > f",
        ])
        #expect(c.map(\.text) == ["barscope run a --b 'x # y'", "echo \"1\" > f", "echo 2 > f"])
        #expect(c[0].comment == "what it does and more")
        #expect(Self.words("run 'a b' \"c d\" e") == ["run", "a b", "c d", "e"])
        #expect(
            Self.exampleLines(inComments: "# text\n#   barscope run x\n#   then open it\nkey = v") == ["barscope run x"]
        )
    }
}

/// The place the examples run in, and what they need, made when first needed.
final class Sandbox {
    let folder: URL
    let clip: String
    var environment = ProcessInfo.processInfo.environment
    var ran: [String] = []
    var skipped: [String] = []
    private var service: Service?
    /// An example's instance ID → the one this run's service gave.
    private var ids: [String: String] = [:]
    /// The instance the `serve --help` routes work on, and the routes left for the end (stopping it).
    private var routeInstance: String?
    private var deferredRoutes: [(String, String, String?, String)] = []
    private var rtsp: RTSPServer?
    private var display: XServer?
    /// A command reading a FIFO, started in the background; the next `echo ... > FIFO` lines feed it.
    private var reader: (process: Process, command: String, source: String, events: String?)?

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

    private func unknown(_ command: DocumentedExamplesTests.Command, _ source: String) {
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

    private func barscope(_ given: [String], _ command: DocumentedExamplesTests.Command, _ source: String) throws {
        var words = given
        let line = command.text
        if line.contains("/dev/video") { return skip(line, source, "needs a camera") }
        let sub = words.first ?? ""
        var pipeline: String? = nil
        if sub == "run", words.count > 1, !words[1].hasPrefix("-"), !words[1].contains("."),
            !words[1].contains("/"), words[1] != "demo"
        {
            pipeline = pipelineText(words[1])
        }
        let overridesInput = words.contains("--input") || words.contains { $0.hasPrefix("source.input=") }
        if let pipeline, !overridesInput, pipeline.contains("input = /dev/video") {
            return skip(line, source, "its pipeline reads a camera")
        }
        if line.contains("postgresql://") {
            return skip(line, source, "writes to the database it names (SightingsTests run a PostgreSQL server)")
        }
        if line.contains("--publish") {
            return skip(
                line, source, "publishes to the broker it names (PublishTests run --publish on a local mosquitto)")
        }
        if sub == "serve" {
            guard service == nil else { return }
            var extra = rerootWords(Array(words.dropFirst()))
            if extra.last == "&" { extra.removeLast() }
            let started = try Service(extra: extra)
            try #require(started.port > 0, "\(line)  [\(source)]: \(started.stderr)")
            service = started
            ran.append(source)
            return
        }
        if words.last == "&" { words.removeLast() }
        words = rerootWords(words)
        for (i, word) in words.enumerated() where word.hasPrefix("rtsp://") && !word.contains("127.0.0.1") {
            words[i] = try localRTSP(word)
        }
        for (i, word) in words.enumerated() {
            if let eq = word.firstIndex(of: "="), word[word.index(after: eq)...].hasPrefix("rtsp://") {
                words[i] = String(word[...eq]) + (try localRTSP(String(word[word.index(after: eq)...])))
            }
        }
        // A re-served stream on a port of its own (a documented port may be taken here).
        if let i = words.firstIndex(of: "--serve-rtsp"), i + 1 < words.count,
            let slash = words[i + 1].firstIndex(of: "/")
        {
            words[i + 1] = "127.0.0.1:0" + words[i + 1][slash...]
        }
        var environment = self.environment
        if words.contains("--display") || pipeline?.contains("[display]\nenabled = true") == true {
            if display == nil { display = try XServer() }
            environment["DISPLAY"] = display!.display
        }
        // A source without an end (a live demo of 0 frames, a camera's RTSP stream, which is reconnected when it
        // ends) runs a few seconds and is stopped as a user stops it: SIGINT, exit 130, the recording finished.
        let endless =
            (words.firstIndex(of: "--frames").map { $0 + 1 < words.count && words[$0 + 1] == "0" } ?? false)
            || (pipeline?.contains("frames = 0") ?? false) || words.contains { $0.contains("rtsp://") }
            || (pipeline?.contains("input = rtsp://") ?? false)
        let before = files()
        // A run reading commands from a FIFO runs in the background; the example's next lines write to it.
        if let i = words.firstIndex(of: "--control"), i + 1 < words.count, isFIFO(words[i + 1]) {
            let p = try start(words, environment)
            let events = words.firstIndex(of: "--events").map { words[$0 + 1] }
            reader = (p.process, line, source, events)
            return
        }
        let result = try execute(words, environment, stopAfter: endless ? 3 : nil)
        let fine: Int32 = endless ? 130 : 0
        #expect(result.status == fine, "\(line)  [\(source)]: exit \(result.status): \(result.stderr.suffix(600))")
        check(sub, words, result.stdout, since: before, line: line, source: source)
        ran.append(source)
    }

    private func isFIFO(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO
    }

    private func start(_ words: [String], _ environment: [String: String]) throws -> (process: Process, output: Pipe) {
        // Its events go to a file (the example names one); standard output is not read.
        let p = Process()
        p.executableURL = Tool.url
        p.arguments = words
        p.currentDirectoryURL = folder
        p.environment = environment
        let out = Pipe()
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        return (p, out)
    }

    /// Runs the tool to its end (120 s at most), or stops it with SIGINT after `stopAfter` seconds.
    private func execute(_ words: [String], _ environment: [String: String], stopAfter: Double?) throws -> Tool.Result {
        let p = Process()
        p.executableURL = Tool.url
        p.arguments = words
        p.currentDirectoryURL = folder
        p.environment = environment
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let pid = p.processIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + 120) { [p] in if p.isRunning { kill(pid, SIGKILL) } }
        // Standard output as it comes (the stop below looks at it).
        let output = PipeDrain(out.fileHandleForReading)
        // Whether an endless example was stopped at 40 s without having shown a code: a failure of the example.
        let showedNothing = Locked(false)
        if let stopAfter {
            // The user's Ctrl-C once the run has shown a code (on standard output or in an events file it writes)
            // and has run `stopAfter` seconds; 40 s at most.
            let started = Date()
            let folder = self.folder
            Thread.detachNewThread {
                // Stops the run once it has shown a code and run `stopAfter`, or at 40 s; ends with the run.
                pollUntil(3600, every: 0.2) {
                    guard p.isRunning else { return true }
                    let elapsed = Date().timeIntervalSince(started)
                    let shown = { () -> Bool in
                        if output.text.contains(#""event":"appeared""#) { return true }
                        let names = (try? FileManager.default.subpathsOfDirectory(atPath: folder.path)) ?? []
                        return names.filter { $0.hasSuffix(".jsonl") }.contains { name in
                            let path = folder.appendingPathComponent(name).path
                            let modified =
                                (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
                            return (modified ?? .distantPast) >= started
                                && ((try? String(contentsOfFile: path, encoding: .utf8))?.contains(
                                    #""event":"appeared""#) ?? false)
                        }
                    }
                    if elapsed >= stopAfter && shown() {
                        kill(pid, SIGINT)
                        return true
                    }
                    if elapsed >= 40 {
                        showedNothing.withLock { $0 = true }
                        kill(pid, SIGINT)
                        return true
                    }
                    return false
                }
            }
        }
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        pollUntil(10) { output.hasEnded }
        if showedNothing.withLock({ $0 }) {
            Issue.record("barscope \(words.joined(separator: " ")): no code shown in 40 s, stopped")
        }
        let o = output.data
        return Tool.Result(
            status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
            stderr: String(decoding: e, as: UTF8.self), output: o)
    }

    /// `echo "TEXT" > FIFO`: the line written to the command reading it.
    private func echo(_ command: DocumentedExamplesTests.Command, _ source: String) throws {
        guard let m = command.text.firstMatch(of: /^echo\s+(.+?)\s*>\s*(\S+)$/) else { return unknown(command, source) }
        let text = DocumentedExamplesTests.words(String(m.1)).joined(separator: " ")
        let path = reroot(String(m.2))
        guard reader != nil else {
            Issue.record("\(command.text)  [\(source)]: nothing reads \(path)")
            return
        }
        // The FIFO opens for writing once its reader has it open (the background run, once started): opened
        // without blocking until then, while the reader runs.
        var fd: Int32 = -1
        pollUntil(30) {
            fd = open(path, O_WRONLY | O_NONBLOCK)
            return fd >= 0 || reader?.process.isRunning != true
        }
        guard fd >= 0 else {
            Issue.record("\(command.text)  [\(source)]: nothing opened \(path) (the reader ended or hung)")
            return
        }
        let bytes = Array((text + "\n").utf8)
        #expect(write(fd, bytes, bytes.count) == bytes.count, "\(command.text)  [\(source)]")
        close(fd)
        ran.append(source)
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

    private func skip(_ line: String, _ source: String, _ why: String) {
        skipped.append("\(line)  [\(source)]: \(why)")
    }

    // MARK: What a command gave

    /// Every file under the folder, with its size.
    func files() -> [String: Int] {
        var out: [String: Int] = [:]
        let walker = FileManager.default.enumerator(atPath: folder.path)
        while let name = walker?.nextObject() as? String {
            let path = folder.appendingPathComponent(name).path
            if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int,
                !isFIFO(path)
            {
                var isFolder: ObjCBool = false
                if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue {
                    out[path] = size
                }
            }
        }
        return out
    }

    /// The result fits the command: events are JSON Lines ending in `eos`, a scan prints codes, every file it wrote
    /// is what its name says, every output it names exists.
    func check(
        _ sub: String, _ words: [String], _ stdout: String, since before: [String: Int], line: String,
        source: String
    ) {
        let lines = stdout.split(separator: "\n").map(String.init)
        let at = "\(line)  [\(source)]"
        switch sub {
        case "run":
            let eventsToFile = words.firstIndex(of: "--events").map { words[$0 + 1] != "-" } ?? false
            for l in lines {
                let object = (try? JSONSerialization.jsonObject(with: Data(l.utf8))) as? [String: Any]
                #expect(object?["event"] != nil, "\(at): not an event: \(l.prefix(200))")
            }
            // Each run of the source ends with `eos` (a camera's stream stopped while it waits to reconnect ends
            // with the `reconnecting` that followed its last run's `eos`).
            if !eventsToFile && !lines.isEmpty {
                let last = lines.last ?? ""
                let ended =
                    last.contains(#""event":"eos""#)
                    || (last.contains(#""event":"reconnecting""#) && lines.contains { $0.contains(#""event":"eos""#) })
                #expect(ended, "\(at): the events end with \(last)")
            }
        case "scan":
            #expect(!lines.isEmpty, "\(at): printed no code")
            for l in lines {
                let fits =
                    l.hasPrefix("{")
                    ? ((try? JSONSerialization.jsonObject(with: Data(l.utf8))) as? [String: Any])?["data"] != nil
                    : l.range(of: #"^[A-Z0-9-]+:."#, options: .regularExpression) != nil
                #expect(fits, "\(at): \(l)")
            }
        default:
            break
        }
        let now = files()
        let written = now.filter { before[$0.key] != $0.value }
        for (path, size) in written {
            checkFile(path, size: size, at: at)
        }
        // Every output the line names was written.
        for option in ["--record", "--events", "--truth"] {
            guard let i = words.firstIndex(of: option), i + 1 < words.count, words[i + 1] != "-" else { continue }
            let named = words[i + 1]
            let stem = (named as NSString).deletingPathExtension
            let found = written.keys.contains { $0.hasSuffix("/" + named) || $0.contains("/" + stem + "-") }
            #expect(found, "\(at): \(option) \(named) was not written")
        }
        if sub == "generate", let out = words.dropFirst().first {
            #expect(written.keys.contains { $0.hasSuffix("/" + out) }, "\(at): \(out) was not written")
        }
        if let i = words.firstIndex(of: "--snapshots"), i + 1 < words.count {
            #expect(written.keys.contains { $0.hasSuffix(".png") }, "\(at): no snapshot in \(words[i + 1])")
        }
    }

    /// A file is what its name says: a video plays (GStreamer's discoverer finds its length), JSON Lines parse, an
    /// image has its format's signature.
    func checkFile(_ path: String, size: Int, at: String) {
        let name = (path as NSString).lastPathComponent
        #expect(size > 0, "\(at): \(name) is empty")
        let kind = (path as NSString).pathExtension.lowercased()
        switch kind {
        case "mp4", "mkv", "webm":
            let found = (try? Tool.shellOutput(["gst-discoverer-1.0", path])) ?? ""
            let duration = found.firstMatch(of: /Duration: (\d+):(\d+):([\d.]+)/).map {
                Double($0.1)! * 3600 + Double($0.2)! * 60 + Double($0.3)!
            }
            #expect((duration ?? 0) > 0, "\(at): \(name) does not play: \(found.suffix(300))")
        case "jsonl":
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            for l in text.split(separator: "\n") {
                #expect(
                    (try? JSONSerialization.jsonObject(with: Data(l.utf8))) is [String: Any],
                    "\(at): \(name): not JSON: \(l.prefix(200))")
            }
        case "png", "jpg", "jpeg":
            let head = [UInt8]((FileManager.default.contents(atPath: path) ?? Data()).prefix(4))
            let signature: [UInt8] = kind == "png" ? [0x89, 0x50, 0x4E, 0x47] : [0xFF, 0xD8, 0xFF]
            #expect(Array(head.prefix(signature.count)) == signature, "\(at): \(name) is not a \(kind) image")
        default:
            break
        }
    }

    // MARK: GStreamer

    private func gstreamer(_ words: [String], _ command: DocumentedExamplesTests.Command, _ source: String) throws {
        var environment = self.environment
        environment = Sanitizer.environment(environment)
        if words.contains("autovideosink") {
            if display == nil { display = try XServer() }
            environment["DISPLAY"] = display!.display
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/" + words[0])
        p.arguments = Array(words.dropFirst())
        p.currentDirectoryURL = folder
        p.environment = environment
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let pid = p.processIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + 120) { [p] in if p.isRunning { kill(pid, SIGKILL) } }
        nonisolated(unsafe) var o = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            o = out.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let e = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        group.wait()
        p.waitUntilExit()
        let output = String(decoding: o, as: UTF8.self)
        let at = "\(command.text)  [\(source)]"
        #expect(p.terminationStatus == 0, "\(at): exit \(p.terminationStatus): \(e.suffix(400))")
        #expect(!e.contains("CRITICAL"), "\(at): \(e.suffix(400))")
        if words[0] == "gst-inspect-1.0" {
            #expect(output.contains("barscope"), "\(at): \(output.prefix(300))")
        } else if words.contains("-m") {
            // The element's messages carry the codes of the clip.
            #expect(output.contains("barscope") && output.contains("symbol"), "\(at): \(output.suffix(400))")
        }
        ran.append(source)
    }

    // MARK: HTTP

    private func curl(_ given: [String], _ command: DocumentedExamplesTests.Command, _ source: String) throws {
        let at = "\(command.text)  [\(source)]"
        guard let service else {
            Issue.record("\(at): no `barscope serve` started before it in its example")
            return
        }
        var words = given.map { word -> String in
            var w = word.replacingOccurrences(of: "localhost:8080", with: "127.0.0.1:\(service.port)")
                .replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(service.port)")
            for (example, real) in ids { w = w.replacingOccurrences(of: example, with: real) }
            return w
        }
        let streams = words.contains { $0.hasPrefix("-") && !$0.hasPrefix("--") && $0.contains("N") }
        if streams { words += ["--max-time", "3"] }
        words += ["--write-out", "\n%{http_code}"]
        let result = try Tool.shellResult(["curl"] + words, folder: folder)
        var body = result.stdout
        let status = Int(body.split(separator: "\n").last ?? "") ?? 0
        if let cut = body.lastIndex(of: "\n") { body = String(body[..<cut]) }
        #expect((200..<300).contains(status), "\(at): HTTP \(status): \(body.prefix(300))")
        #expect(result.status == 0 || (streams && result.status == 28), "\(at): curl exit \(result.status)")
        try answerFits(body, comment: command.comment, words: words, at: at)
        // The instance it made stands for the example's ID in the lines that follow.
        if let id = (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["id"] as? String,
            let example = command.comment.firstMatch(of: /"id":\s*"([^"]+)"/)
        {
            ids[String(example.1)] = id
        }
        // A control command's effect: its event follows.
        if let control = words.firstIndex(of: "-d").map({ words[$0 + 1] }), control.contains("\"command\""),
            let id = words.last(where: { $0.contains("/v1/instances/") })?.firstMatch(of: /instances\/([^\/]+)\//)
        {
            let name = control.firstMatch(of: /"command":\s*"(\w+)/).map { String($0.1) } ?? ""
            // A viewfinder's new ratio: the event of the region it settles at.
            let ratio = control.firstMatch(of: /(\d+):(\d+)/).map { Double($0.1)! / Double($0.2)! }
            let ratioOf = { (e: [String: Any]) -> Double? in
                guard let r = e["region"] as? [String: Any], let w = r["width"] as? Double,
                    let h = r["height"] as? Double, h > 0
                else { return nil }
                return w / h
            }
            let event = try waitForEvent(name, instance: String(id.1), service: service) { e in
                guard name == "viewfinder", let ratio else { return true }
                return ratioOf(e).map { abs($0 - ratio) < 0.02 } ?? false
            }
            #expect(event != nil, "\(at): no \(name) event followed")
            if name == "viewfinder", let ratio, let event {
                #expect(ratioOf(event).map { abs($0 - ratio) < 0.02 } == true, "\(at): the new viewfinder is \(event)")
            }
        }
        ran.append(source)
    }

    /// The instance's event named `name` that `fits`, from its event stream (10 s at most); the last one named
    /// `name` when none fits.
    func waitForEvent(
        _ name: String, instance: String, service: Service, fits: ([String: Any]) -> Bool = { _ in true }
    ) throws -> [String: Any]? {
        let deadline = Date(timeIntervalSinceNow: 10)
        var last: [String: Any]? = nil
        while Date() < deadline {
            let r = try Tool.shellResult(
                ["curl", "-sN", "--max-time", "1", "\(service.base)/v1/instances/\(instance)/events?since=0"],
                folder: folder)
            for l in r.stdout.split(separator: "\n") where l.hasPrefix("data: ") {
                let object = try? JSONSerialization.jsonObject(with: Data(l.dropFirst(6).utf8)) as? [String: Any]
                guard let object, object["event"] as? String == name else { continue }
                if fits(object) { return object }
                last = object
            }
        }
        return last
    }

    /// The answer has what the example's comment says it has: the fields it lists, the keys of the JSON it shows,
    /// an event stream, Prometheus text, the image it saved.
    func answerFits(_ body: String, comment: String, words: [String], at: String) throws {
        if let i = words.firstIndex(of: "-o") {
            let path = folder.appendingPathComponent(words[i + 1]).path
            checkFile(path, size: (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0, at: at)
            return
        }
        let json = try? JSONSerialization.jsonObject(with: Data(body.utf8))
        let object = (json as? [String: Any]) ?? ((json as? [[String: Any]])?.first)
        var keys: [String] = []
        if comment.hasPrefix("{") || comment.hasPrefix("[") {
            keys = comment.matches(of: /"(\w+)":/).map { String($0.1) }
        } else if let list = comment.firstMatch(of: /^([a-z_]+(?:, [a-z_]+)+)$/) {
            keys = list.1.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        for key in keys { #expect(object?[key] != nil, "\(at): the answer has no \(key): \(body.prefix(300))") }
        if comment.contains("Server-Sent Events") {
            #expect(body.contains("data: {"), "\(at): \(body.prefix(300))")
        }
        if comment.contains("Prometheus") { #expect(body.contains("# TYPE"), "\(at): \(body.prefix(300))") }
        if comment.contains("final status") { #expect(object?["state"] != nil, "\(at): \(body.prefix(300))") }
    }

    /// A route of `serve --help`, on an instance of the live demo made for them; routes that stop it run last.
    func route(_ method: String, _ path: String, _ body: String?, from source: String) throws {
        if service == nil {
            let started = try Service()
            try #require(started.port > 0, "\(started.stderr)")
            service = started
        }
        let service = service!
        if routeInstance == nil {
            let made = try service.request(
                "POST", "/v1/pipelines/demo/instances",
                json: ["set": ["source.live": "true", "source.frames": "0", "cycles.mode": "commands"]])
            routeInstance = made.object["id"] as? String
            try #require(routeInstance != nil, "\(made.text)")
        }
        let id = routeInstance!
        // The help's `[/ID]` is two routes; placeholders take this run's values.
        var paths = [path]
        if path.contains("[/ID]") {
            paths = [
                path.replacingOccurrences(of: "[/ID]", with: ""), path.replacingOccurrences(of: "[/ID]", with: "/ID"),
            ]
        }
        for p in paths {
            if p.contains("FILE") {
                skip("\(method) \(p)", source, "names a snapshot a run saved (ServeTests fetch one)")
                continue
            }
            let real = p.replacingOccurrences(of: "NAME", with: "demo").replacingOccurrences(of: "ID", with: id)
                .replacingOccurrences(of: "=N", with: "=2")
            if method == "DELETE" || (method == "POST" && p.contains("/instances") && !p.contains("ID")) {
                deferredRoutes.append((method, real, body, source))
                continue
            }
            try call(method, real, body, source)
        }
    }

    /// The routes that make or stop instances, after the others.
    func deleteRoutes() throws {
        for (method, path, body, source) in deferredRoutes.sorted(by: { $0.0 == "POST" && $1.0 != "POST" }) {
            var b = body
            // The help's example body names a clip: this test's.
            if let given = b, given.contains("clip.mp4") { b = given.replacingOccurrences(of: "clip.mp4", with: clip) }
            try call(method, path, b, source)
        }
    }

    private func call(_ method: String, _ path: String, _ body: String?, _ source: String) throws {
        let service = service!
        let at = "\(method) \(path)  [\(source)]"
        let streams = path.hasSuffix("/events") || path.contains(".mjpg") || path.hasPrefix("/v1/events")
        var args = ["curl", "-s", "-X", method, "--write-out", "\n%{http_code}", "\(service.base)\(path)"]
        if streams { args += ["-N", "--max-time", "2"] }
        if let body { args += ["-d", body] }
        let r = try Tool.shellResult(args, folder: folder)
        let status = Int(r.stdout.split(separator: "\n").last ?? "") ?? 0
        #expect((200..<300).contains(status), "\(at): HTTP \(status): \(r.stdout.prefix(300))")
        if path.hasSuffix(".jpg") {
            #expect(r.output.prefix(3) == Data([0xFF, 0xD8, 0xFF]), "\(at): not a JPEG")
        }
        if path.hasSuffix("/events") { #expect(r.stdout.contains("data: {"), "\(at): \(r.stdout.prefix(200))") }
        ran.append(source)
    }

    // MARK: Key files

    /// A key-file block: saved under the name its own example runs it by, checked with `validate`, and its examples
    /// run.
    func keyFile(_ text: String, from source: String) throws {
        let examples = DocumentedExamplesTests.exampleLines(inComments: text)
        var name = "example.conf"
        if let first = examples.first {
            let words = DocumentedExamplesTests.words(first)
            if words.count > 2 { name = words[2].hasSuffix(".conf") ? words[2] : "pipelines/\(words[2]).conf" }
        }
        let path = folder.appendingPathComponent(name).path
        try? FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let checked = try Tool.run(["validate", path])
        #expect(checked.status == 0, "\(name)  [\(source)]: \(checked.stderr)")
        ran.append(source)
        // A named pipeline found in ./pipelines (the documented file, not the tree's).
        let saved = environment["BARSCOPE_PIPELINES"]
        environment["BARSCOPE_PIPELINES"] = folder.appendingPathComponent("pipelines").path
        defer { environment["BARSCOPE_PIPELINES"] = saved }
        for line in examples {
            for command in DocumentedExamplesTests.commands([line]) { try run(command, from: source) }
        }
    }
}

extension Tool {
    /// Runs a program of the system (curl, gst-discoverer-1.0) in `folder`, found on the PATH; stopped after
    /// `timeout` seconds.
    static func shellResult(_ args: [String], folder: URL? = nil, timeout: Double = 60) throws -> Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = args
        if let folder { p.currentDirectoryURL = folder }
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let pid = p.processIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [p] in if p.isRunning { kill(pid, SIGKILL) } }
        nonisolated(unsafe) var o = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            o = out.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let e = err.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        p.waitUntilExit()
        return Result(
            status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
            stderr: String(decoding: e, as: UTF8.self), output: o)
    }

    static func shellOutput(_ args: [String]) throws -> String { try shellResult(args).stdout }
}
