import Barscope
import Foundation

/// `barscope pipelines`: the named pipelines and what each is for.
/// `barscope validate FILE...`: checks pipeline files without running them.
enum PipelinesCommand {
    static func list(_ tokens: [String]) throws -> Int32 {
        guard tokens.isEmpty else { throw UsageError("pipelines takes no arguments") }
        let all = PipelineSpec.all()
        if all.isEmpty {
            FileHandle.standardError.write(
                Data("barscope: no pipelines in \(PipelineSpec.searchPath().joined(separator: ", "))\n".utf8))
            return 0
        }
        let width = all.map(\.name.count).max() ?? 0
        for p in all {
            print(
                p.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + (p.description ?? "(no description)")
            )
        }
        return 0
    }

    /// Checks every value, but not that inputs exist (a pipeline may name a file made later or a camera
    /// elsewhere); exit 2 at the first file with a problem.
    static func validate(_ tokens: [String]) throws -> Int32 {
        guard !tokens.isEmpty else { throw UsageError("validate needs at least one pipeline file") }
        for path in tokens {
            let file = path.hasSuffix(".conf") ? path : (PipelineSpec.find(path) ?? path)
            guard FileManager.default.fileExists(atPath: file) else {
                throw BarscopeError.badInput("\(path): no such file")
            }
            var spec = try PipelineSpec(file: file)
            try spec.set("source", "input", "demo", origin: "validate")  // the input is checked when it runs
            let (configuration, _) = try spec.configuration()
            do { try configuration.checkGraph() } catch let e as BarscopeError {
                throw BarscopeError.badValue(
                    e.description.hasPrefix(file) ? e.description : "\(file): \(e.description)")
            }
            print("\(file): ok")
        }
        return 0
    }
}
