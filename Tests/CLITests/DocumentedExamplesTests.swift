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
