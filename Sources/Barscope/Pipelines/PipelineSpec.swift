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
        "source": ["input", "launch", "size", "fps", "frames", "live", "format", "rtsp-transport", "latency"],
        "viewfinder": [
            "enabled", "aspect-ratio", "insets", "preferred-height", "region", "secondary-aspect-ratio",
            "secondary-insets",
        ],
        "decoder": ["symbologies", "engine", "threads", "tracked", "search-every"],
        "overlay": OverlayStyle.keys,
        "tracking": ["every-frame", "report", "lost-after-frames"],
        "record": ["path", "segment-seconds"],
        "display": ["enabled"],
        "rtsp": ["serve"],
        "events": ["path"],
        "snapshots": ["folder"],
    ]

    struct Value: Sendable {
        var text: String
        var origin: String
    }
    /// "section.key" → value and where it came from (a file, `--set`, a flag).
    private var values: [String: Value] = [:]
    /// `-S` values accumulate rather than replace.
    private var symbologies: [Value] = []
    /// `[properties] element.property = value`, in order.
    private var properties: [ElementProperty] = []
    /// The keys of a `[branch NAME]` section.
    static let branchKeys = ["from", "launch"]
    /// How errors list the sections: the fixed ones, and the two kinds with names or free keys.
    static var sectionList: String { (schema.keys.sorted() + ["branch NAME", "properties"]).joined(separator: ", ") }

    public init() {}

    /// Reads a pipeline file. Unknown sections and keys are errors naming file, section and key.
    public init(file path: String) throws {
        guard let bytes = FileManager.default.contents(atPath: path) else {
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

    /// The run this pipeline describes, every value checked.
    /// - Returns: the configuration and where events go (`-` for standard output).
    /// - Throws: ``BarscopeError`` naming origin, section, key and value.
    public func configuration() throws -> (RunConfiguration, eventsPath: String) {
        var c = RunConfiguration()
        func bad(_ name: String, _ expected: String) -> BarscopeError {
            let v = values[name]!
            let parts = name.split(separator: ".").map(String.init)
            if v.origin.hasPrefix("-") && v.origin != "--set" {
                return .badValue("\(v.origin) '\(v.text)': expected \(expected)")
            }
            return .badValue("\(v.origin): [\(parts[0])] \(parts[1]): '\(Redact.uri(v.text))' is not \(expected)")
        }
        func text(_ name: String) -> String? { values[name]?.text }
        func bool(_ name: String) throws -> Bool? {
            guard let t = text(name) else { return nil }
            switch t.lowercased() {
            case "true", "yes", "on", "1": return true
            case "false", "no", "off", "0": return false
            default: throw bad(name, "true or false")
            }
        }
        func int(_ name: String, min: Int) throws -> Int? {
            guard let t = text(name) else { return nil }
            guard let v = Int(t), v >= min else { throw bad(name, "a whole number ≥ \(min)") }
            return v
        }

        var demo = DemoOptions()
        if let t = text("source.size") {
            guard let s = Size(parsing: t), s.width >= 64, s.height >= 64, s.width <= 8192, s.height <= 8192 else {
                throw bad("source.size", "WIDTHxHEIGHT between 64x64 and 8192x8192")
            }
            demo.size = s
        }
        if let v = try int("source.fps", min: 1) { demo.fps = v }
        if let v = try int("source.frames", min: 0) { demo.frames = v }
        if let v = try bool("source.live") { demo.live = v }
        if let launch = values["source.launch"] {
            // The file's own source: its author's fragment; user values reach it through [properties].
            if let input = values["source.input"], input.origin != "validate" {
                throw BarscopeError.badValue(
                    "\(launch.origin): [source]: give either input or launch, not both (input from \(input.origin))")
            }
            guard !launch.text.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw BarscopeError.badValue("\(launch.origin): [source] launch: empty")
            }
            c.input = .launch(launch.text, live: demo.live)
        } else {
            do { c.input = try InputSource.parse(text("source.input") ?? "demo", demo: demo) } catch let e
                as BarscopeError
            {
                // A file or --set is named; a flag or positional source already is the value at fault.
                if let v = values["source.input"], v.origin != "the command line",
                    !v.origin.hasPrefix("-") || v.origin == "--set"
                {
                    throw BarscopeError.badInput("\(v.origin): [source] input: \(e.description)")
                }
                throw e
            }

        }
        if text("source.frames") != nil { c.imageFrames = demo.frames }
        c.imageFPS = demo.fps
        // A camera is asked only for what was stated; the demo's defaults are not a request.
        c.camera = CameraRequest(
            size: text("source.size") == nil ? nil : demo.size, fps: text("source.fps") == nil ? nil : demo.fps,
            format: text("source.format"))
        if let t = text("source.format") {
            guard !t.isEmpty, t.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else {
                throw bad("source.format", "a pixel format such as YUY2, NV12 or MJPG")
            }
            guard case .device = c.input else {
                let origin = values["source.format"]!.origin
                throw BarscopeError.badValue(
                    origin.hasPrefix("-") && origin != "--set"
                        ? "\(origin) '\(t)': only for a camera input (/dev/videoN)"
                        : "\(origin): [source] format: '\(t)' is only for a camera input (/dev/videoN)")
            }
        }
        if let t = text("source.rtsp-transport") {
            guard t == "tcp" || t == "udp" else { throw bad("source.rtsp-transport", "tcp or udp") }
            c.rtspTransport = t
        }
        if let v = try int("source.latency", min: 0) { c.rtspLatencyMs = v }
        c.rtspCredentials = RTSPCredentials.fromEnvironment()

        if try bool("viewfinder.enabled") == false {
            c.viewfinder = .off
        } else {
            do {
                c.viewfinder = try Viewfinder.parse(
                    aspect: text("viewfinder.aspect-ratio") ?? "4:3", insets: text("viewfinder.insets") ?? "20",
                    region: text("viewfinder.region"))
            } catch let e as BarscopeError {
                // Viewfinder.parse names the value it refused first: "viewfinder '…'", "insets '…'", "region '…'".
                let key =
                    e.description.hasPrefix("insets")
                    ? "insets" : e.description.hasPrefix("region") ? "region" : "aspect-ratio"
                let origin = values["viewfinder." + key]?.origin ?? "the command line"
                throw BarscopeError.badValue(Self.located(origin, "viewfinder", key, e.description))
            }
            if let v = try int("viewfinder.preferred-height", min: 1) { c.viewfinder.preferredHeight = Double(v) }
            if let t = text("viewfinder.secondary-aspect-ratio") {
                guard let r = AspectRatio(parsing: t) else { throw bad("viewfinder.secondary-aspect-ratio", "W:H") }
                c.viewfinder.secondaryAspectRatio = r
            }
            if let t = text("viewfinder.secondary-insets") {
                do { c.viewfinder.secondaryMinimumInset = try Viewfinder.parseInsets(t) } catch {
                    throw bad("viewfinder.secondary-insets", "N or top,left,bottom,right (each ≥ 0)")
                }
            }
        }

        for s in symbologies {
            do { try c.scanner.add(s.text) } catch let e as BarscopeError {
                throw BarscopeError.badValue(Self.located(s.origin, "decoder", "symbologies", e.description))
            }
        }
        if let v = values["decoder.engine"] {
            do { c.engine = try Engine.parse(v.text) } catch let e as BarscopeError {
                throw BarscopeError.badValue(Self.located(v.origin, "decoder", "engine", e.description))
            }
        }
        if let v = try int("decoder.threads", min: 1) { c.scanThreads = v }
        if let v = try bool("decoder.tracked") { c.tracked = v }
        if let v = try int("decoder.search-every", min: 1) {
            c.tracked = true
            c.trackedInterval = v
        }

        for key in OverlayStyle.keys {
            guard let v = values["overlay." + key] else { continue }
            do { try c.style.set(key, to: v.text) } catch let e as BarscopeError {
                throw BarscopeError.badValue(Self.located(v.origin, "overlay", key, e.description))
            }
        }
        if let v = try bool("tracking.every-frame") { c.everyFrame = v }
        if let v = try int("tracking.lost-after-frames", min: 1) { c.lostAfterFrames = v }
        if let v = values["tracking.report"] {
            do { c.duplicates = try DuplicatePolicy.parse(v.text) } catch let e as BarscopeError {
                throw BarscopeError.badValue(Self.located(v.origin, "tracking", "report", e.description))
            }
        }
        if let path = text("record.path") {
            do {
                c.recording = try Recording(path: path, segmentSeconds: try int("record.segment-seconds", min: 1))
            } catch let e as BarscopeError where !e.description.contains("[record]") {
                throw BarscopeError.badValue(
                    Self.located(values["record.path"]!.origin, "record", "path", e.description))
            }
        } else if values["record.segment-seconds"] != nil {
            throw BarscopeError.badValue(
                "\(values["record.segment-seconds"]!.origin): [record] segment-seconds: needs [record] path")
        }
        if let v = try bool("display.enabled") { c.display = v }
        c.serveRTSP = text("rtsp.serve")
        c.snapshotFolder = text("snapshots.folder")
        for name in Set(
            values.keys.compactMap { k -> String? in
                guard k.hasPrefix("branch ") else { return nil }
                return String(k.split(separator: ".", maxSplits: 1)[0])
            }
        ).sorted() {
            let origin = (values[name + ".launch"] ?? values[name + ".from"])!.origin
            guard let launch = values[name + ".launch"]?.text, !launch.isEmpty else {
                throw BarscopeError.badValue("\(origin): [\(name)] launch: required (a gst-launch fragment)")
            }
            let from = values[name + ".from"]?.text ?? "annotated"
            guard from == "annotated" || from == "raw" else {
                throw BarscopeError.badValue("\(origin): [\(name)] from: '\(from)' is not annotated or raw")
            }
            c.branches.append(Branch(name: Self.branchName(name)!, annotated: from == "annotated", launch: launch))
        }
        c.properties = properties
        return (c, text("events.path") ?? "-")
    }

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
