import Barscope
import Foundation
import TestSupport
import Testing

/// Key-file blocks: saved under the name their example runs them by, and validated.
extension Sandbox {
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
