import CGStreamer
import Foundation

/// A named pipeline: a key-file (INI, read with GLib's `GKeyFile`, as DeepStream's configs are) whose sections set
/// the source, viewfinder, decoder, overlay, tracking and sinks. The command line speaks the same language:
/// every flag is a `section.key=value`, applied after the file, so flags and `--set` override it.
///
/// ```
/// # Scan a file and keep the annotated copy. barscope run pipelines/file-annotate.conf --set source.input=a.mp4
/// [pipeline]
/// description = Scan a video file, record the annotated copy and the events
/// [source]
/// input = clip.mp4
/// [record]
/// path = annotated.mp4
/// ```
public struct PipelineSpec: Sendable {
    /// Every section and its keys.
    public static let schema: [String: [String]] = [
        "pipeline": ["description"],
        "source": [
            "input", "launch", "size", "fps", "frames", "live", "scene", "format", "rtsp-transport", "latency",
        ],
        "viewfinder": [
            "enabled", "aspect-ratio", "insets", "preferred-height", "region", "secondary-aspect-ratio",
            "secondary-insets",
        ],
        "decoder": [
            "symbologies", "engine", "threads", "tracked", "search-every", "search-lines", "whole-search-every",
            "hard-codes",
        ],
        "overlay": OverlayStyle.keys,
        "tracking": ["every-frame", "report", "lost-after-frames", "confirm-frames"],
        "record": ["path", "segment-seconds"],
        "display": ["enabled"],
        "rtsp": ["serve"],
        "events": ["path"],
        "snapshots": ["folder"],
        "cycles": ["mode", "timeout", "gap", "expect", "expect-count"],
        "publish": ["url", "node", "spool", "spool-max"],
    ]

    struct Value: Sendable {
        var text: String
        var origin: String
    }
    /// "section.key" → value and where it came from (a file, `--set`, a flag).
    private(set) var values: [String: Value] = [:]
    /// `-S` values accumulate rather than replace.
    private(set) var symbologies: [Value] = []
    /// `[properties] element.property = value`, in order.
    private(set) var properties: [ElementProperty] = []
    /// The keys of a `[branch NAME]` section.
    static let branchKeys = ["from", "launch"]
    /// How errors list the sections: the fixed ones, and the two kinds with names or free keys.
    static var sectionList: String { (schema.keys.sorted() + ["branch NAME", "properties"]).joined(separator: ", ") }

    public init() {}

    /// Reads a pipeline file. Unknown sections and keys are errors naming file, section and key.
    public init(file path: String) throws {
        guard let bytes = FileContents.read(atPath: path) else {
            throw BarscopeError.badInput("\(path): cannot read the file")
        }
        try self.init(origin: path, bytes: bytes)
    }

    /// Reads pipeline-file text (the fuzzer's way in; messages name `origin` as they would the file).
    public init(text: String, origin: String) throws {
        try self.init(origin: origin, bytes: Data(text.utf8))
    }

    /// A key given twice in a section (a section may reopen further down): GKeyFile keeps the last silently, so a
    /// user who edits the first sees no effect; both lines are named instead.
    static func rejectDuplicateKeys(in text: String, origin: String) throws {
        var section: String? = nil
        var seen: [String: Int] = [:]
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                section = String(line.dropFirst().dropLast())
                continue
            }
            guard let section, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            let id = section + "\u{0}" + key
            if let first = seen[id] {
                throw BarscopeError.badValue(
                    "\(origin): [\(Self.printable(section))] \(Self.printable(key)): given twice (lines \(first) "
                        + "and \(index + 1))")
            }
            seen[id] = index + 1
        }
    }

    /// The file's bytes go to GLib as they are (its messages quote a bad line); the duplicate-key check reads them
    /// as text once GLib has accepted them.
    private init(origin path: String, bytes: Data) throws {
        GStreamer.initialize()
        let keyFile = g_key_file_new()
        defer { g_key_file_free(keyFile) }
        var error: UnsafeMutablePointer<GError>? = nil
        let loaded = bytes.withUnsafeBytes { raw in
            g_key_file_load_from_data(
                keyFile, raw.baseAddress?.assumingMemoryBound(to: CChar.self), gsize(raw.count), G_KEY_FILE_NONE,
                &error)
        }
        guard loaded != 0 else {
            let message = error.map { String(cString: $0.pointee.message) } ?? "cannot read"
            if let error { g_error_free(error) }
            throw BarscopeError.badInput("\(path): \(Self.printable(message))")
        }
        try Self.rejectDuplicateKeys(in: String(decoding: bytes, as: UTF8.self), origin: path)
        var groupCount: gsize = 0
        guard let groups = g_key_file_get_groups(keyFile, &groupCount) else { return }
        defer { g_strfreev(groups) }
        for g in 0..<Int(groupCount) {
            guard let groupName = groups[g] else { continue }
            let section = String(cString: groupName)
            guard Self.schema[section] != nil || section == "properties" || Self.branchName(section) != nil else {
                throw BarscopeError.badValue("\(path): [\(section)]: unknown section (one of \(Self.sectionList))")
            }
            var keyCount: gsize = 0
            guard let keys = g_key_file_get_keys(keyFile, groupName, &keyCount, nil) else { continue }
            defer { g_strfreev(keys) }
            for k in 0..<Int(keyCount) {
                guard let keyName = keys[k], let raw = g_key_file_get_string(keyFile, groupName, keyName, nil) else {
                    continue
                }
                defer { g_free(raw) }
                try set(section, String(cString: keyName), String(cString: raw), origin: path)
            }
        }
    }

    /// GLib quotes the offending line whole: from a binary file that is kilobytes of control characters on the
    /// user's terminal. Keep one short printable line.
    static func printable(_ message: String, limit: Int = 160) -> String {
        var out = String(
            message.unicodeScalars.map { s -> Character in
                s.properties.generalCategory == .control || s == "\u{FFFD}" ? "?" : Character(s)
            })
        if out.count > limit { out = String(out.prefix(limit)) + "…" }
        return out
    }

    /// Sets `section.key` from `origin` (a file path, `--set`, or a flag's name).
    /// - Throws: ``BarscopeError/badValue`` for an unknown section or key.
    public mutating func set(_ section: String, _ key: String, _ value: String, origin: String) throws {
        if section == "properties" {
            let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw BarscopeError.badValue("\(origin): [properties] \(key): expected ELEMENT.PROPERTY = VALUE")
            }
            properties.removeAll { $0.element == parts[0] && $0.property == parts[1] }
            properties.append(ElementProperty(element: parts[0], property: parts[1], value: value, origin: origin))
            return
        }
        if Self.branchName(section) != nil {
            guard Self.branchKeys.contains(key) else {
                throw BarscopeError.badValue(
                    "\(origin): [\(section)] \(key): unknown key (one of \(Self.branchKeys.joined(separator: ", ")))")
            }
            values[section + "." + key] = Value(text: value, origin: origin)
            return
        }
        guard let keys = Self.schema[section] else {
            throw BarscopeError.badValue("\(origin): [\(section)]: unknown section (one of \(Self.sectionList))")
        }
        guard keys.contains(key) else {
            throw BarscopeError.badValue(
                "\(origin): [\(section)] \(key): unknown key (one of \(keys.joined(separator: ", ")))")
        }
        let name = section + "." + key
        if name == "decoder.symbologies" {
            for v in value.split(whereSeparator: { $0 == " " || $0 == ";" || $0 == "," }) {
                symbologies.append(Value(text: String(v), origin: origin))
            }
            return
        }
        // The region is stated one way or the other: both from one place is an error, a later place replaces.
        let regionKeys = ["viewfinder.region"]
        let ratioKeys = ["viewfinder.aspect-ratio", "viewfinder.insets", "viewfinder.preferred-height"]
        let others = regionKeys.contains(name) ? ratioKeys : ratioKeys.contains(name) ? regionKeys : []
        for other in others {
            if let existing = values[other], Self.sameSource(existing.origin, origin), origin != "--set" {
                throw BarscopeError.badValue(
                    origin.hasPrefix("-")
                        ? "give the viewfinder either as --region (normalised x,y,w,h) or as --viewfinder/--insets/"
                            + "--preferred-height, not both"
                        : "\(origin): [viewfinder]: give either region (normalised x,y,w,h) or aspect-ratio/insets/"
                            + "preferred-height, not both")
            }
            values[other] = nil
        }
        values[name] = Value(text: value, origin: origin)
    }

    /// `branch archive` → `archive` (letters, digits, - and _), else nil.
    static func branchName(_ section: String) -> String? {
        guard section.hasPrefix("branch ") else { return nil }
        let name = String(section.dropFirst(7))
        let ok =
            !name.isEmpty && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
        return ok ? name : nil
    }

    /// Flags are one source (the command line); a file is another.
    static func sameSource(_ a: String, _ b: String) -> Bool { a == b || (a.hasPrefix("-") && b.hasPrefix("-")) }

    /// One line naming where a bad value came from: a flag speaks for itself ("--insets '-5': …"); a file or
    /// `--set` gives file, section and key ("dock.conf: [viewfinder] insets: …").
    static func located(_ origin: String, _ section: String, _ key: String, _ inner: String) -> String {
        if origin.hasPrefix("-") && origin != "--set" {
            let named = ["viewfinder '", "insets '", "region '"].contains { inner.hasPrefix($0) }
            return named ? "--" + inner : inner
        }
        return "\(origin): [\(section)] \(key): \(inner)"
    }

    /// Sets a dotted `section.key=value` (`--set`).
    public mutating func set(assignment: String) throws {
        let parts = assignment.split(separator: "=", maxSplits: 1).map(String.init)
        let path = parts.first?.split(separator: ".", maxSplits: 1).map(String.init) ?? []
        guard parts.count == 2, path.count == 2 else {
            throw BarscopeError.badValue(
                "--set '\(Redact.uri(assignment))': expected SECTION.KEY=VALUE (viewfinder.aspect-ratio=16:9)")
        }
        try set(path[0], path[1], parts[1], origin: "--set")
    }

    public var description: String? { values["pipeline.description"]?.text }

    /// Where `barscope run NAME` looks for `NAME.conf`, in order: `$BARSCOPE_PIPELINES` (folders separated by
    /// `:`), `./pipelines`, `~/.config/barscope/pipelines`, and the `pipelines` folder shipped beside the tool.
    public static func searchPath(executable: String = CommandLine.arguments[0]) -> [String] {
        var folders: [String] = []
        if let env = ProcessInfo.processInfo.environment["BARSCOPE_PIPELINES"] {
            folders += env.split(separator: ":").map(String.init)
        }
        folders.append("pipelines")
        folders.append(NSHomeDirectory() + "/.config/barscope/pipelines")
        // .build/<config>/barscope → the package root's pipelines/.
        let tool = URL(fileURLWithPath: executable).resolvingSymlinksInPath()
        folders.append(tool.deletingLastPathComponent().appendingPathComponent("../../../pipelines").standardized.path)
        return folders
    }

    /// The file of a named pipeline, or nil.
    public static func find(_ name: String) -> String? {
        for folder in searchPath() {
            let path = (folder as NSString).appendingPathComponent(name + ".conf")
            if FileManager.default.fileExists(atPath: path) { return path }
        }
        return nil
    }

    /// Every named pipeline on the search path (first one wins), with its description.
    public static func all() -> [(name: String, path: String, description: String?)] {
        var seen = Set<String>()
        var found: [(String, String, String?)] = []
        for folder in searchPath() {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            for f in files.sorted() where f.hasSuffix(".conf") {
                let name = String(f.dropLast(5))
                guard seen.insert(name).inserted else { continue }
                let path = (folder as NSString).appendingPathComponent(f)
                found.append((name, path, (try? PipelineSpec(file: path))?.description))
            }
        }
        return found
    }
}
