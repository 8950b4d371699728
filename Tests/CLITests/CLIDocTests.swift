import Foundation
import TestSupport
import Testing

/// docs/cli.md shows each command's `--help` as it is: every block under a "## `barscope ... --help`" heading is
/// that command's output, byte for byte, and every command that has a help has its block.
@Suite(.suiteLimit)
struct CLIDocTests {
    @Test func theCommandLinePageIsTheHelp() throws {
        let page = try String(
            contentsOf: OpenAPITests.root.appendingPathComponent("docs/cli.md"), encoding: .utf8)
        var shown: [String: String] = [:]
        for m in page.matches(of: /## `barscope ([a-z ]*)--help`\n\n```text\n([\s\S]*?)\n```/) {
            shown[String(m.1).trimmingCharacters(in: .whitespaces)] = String(m.2)
        }
        for sub in ["", "run", "scan", "generate", "serve", "search", "index"] {
            let help = try Tool.run((sub.isEmpty ? [] : [sub]) + ["--help"]).stdout
            var expected = help
            while expected.hasSuffix("\n") { expected.removeLast() }
            let name = sub.isEmpty ? "barscope --help" : "barscope \(sub) --help"
            #expect(shown[sub] != nil, "docs/cli.md has no block for \(name)")
            if let block = shown[sub] {
                #expect(
                    block == expected, "docs/cli.md's \(name) differs from the program's: paste the new --help there")
            }
        }
    }
}
