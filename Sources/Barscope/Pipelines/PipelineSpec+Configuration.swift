import CGStreamer
import Foundation

/// A pipeline file's values as a run's configuration: each checked, each error naming origin, section, key and
/// value.
extension PipelineSpec {
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
        if let t = text("source.scene") {
            guard let kind = DemoScene.Kind(rawValue: t) else {
                throw bad("source.scene", "codes, conveyor, small, hard or mix")
            }
            demo.scene = kind
        }
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
            // Each value parsed on its own, so that a refusal names its own key.
            func at<T>(_ key: String, _ parse: () throws -> T) throws -> T {
                do { return try parse() } catch let e as BarscopeError {
                    let origin = values["viewfinder." + key]?.origin ?? "the command line"
                    throw BarscopeError.badValue(Self.located(origin, "viewfinder", key, e.description))
                }
            }
            if let region = text("viewfinder.region"), !region.isEmpty {
                c.viewfinder = try at("region") { try Viewfinder.parse(aspect: "4:3", region: region) }
            } else {
                let insets = try at("insets") { try Viewfinder.parseInsets(text("viewfinder.insets") ?? "20") }
                let aspect = text("viewfinder.aspect-ratio") ?? "4:3"
                c.viewfinder = try at("aspect-ratio") { try Viewfinder.parse(aspect: aspect, insets: insets) }
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
        if let v = try bool("decoder.hard-codes") { c.hardCodes = v }
        if let v = try bool("decoder.tracked") { c.tracked = v }
        if let v = try int("decoder.search-every", min: 1) {
            c.tracked = true
            c.trackedInterval = v
        }
        if let v = try int("decoder.search-lines", min: 1) {
            c.tracked = true
            c.trackedSearchLines = v
        }
        if let v = try int("decoder.whole-search-every", min: 1) {
            c.tracked = true
            c.trackedWholeSearchEvery = v
        }

        for key in OverlayStyle.keys {
            guard let v = values["overlay." + key] else { continue }
            do { try c.style.set(key, to: v.text) } catch let e as BarscopeError {
                throw BarscopeError.badValue(Self.located(v.origin, "overlay", key, e.description))
            }
        }
        if let v = try bool("tracking.every-frame") { c.everyFrame = v }
        if let v = try int("tracking.lost-after-frames", min: 1) { c.lostAfterFrames = v }
        if let v = try int("tracking.confirm-frames", min: 1) { c.confirmation = Tracker.Confirmation(frames: v) }
        if let v = values["tracking.report"] {
            do { c.duplicates = try DuplicatePolicy.parse(v.text) } catch let e as BarscopeError {
                throw BarscopeError.badValue(Self.located(v.origin, "tracking", "report", e.description))
            }
        }
        if let path = text("record.path") {
            let segmentSeconds = try int("record.segment-seconds", min: 1)
            do {
                c.recording = try Recording(path: path, segmentSeconds: segmentSeconds)
            } catch let e as BarscopeError {
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
        if let mode = text("cycles.mode") {
            switch mode {
            case "auto": c.cycles.auto = true
            case "motion":
                c.cycles.auto = true
                c.cycles.motion = true
            case "commands", "off": c.cycles.auto = false
            default: throw bad("cycles.mode", "auto, motion or commands")
            }
        }
        if let ms = try int("cycles.timeout", min: 1) { c.cycles.timeoutNs = UInt64(ms) * 1_000_000 }
        if let ms = try int("cycles.gap", min: 1) { c.cycles.gapNs = UInt64(ms) * 1_000_000 }
        if let v = values["cycles.expect"] {
            do { c.cycles.expect = try CodeExpectation.parse(v.text) } catch let e as BarscopeError {
                throw BarscopeError.badValue(
                    v.origin.hasPrefix("-") && v.origin != "--set"
                        ? e.description : Self.located(v.origin, "cycles", "expect", e.description))
            }
        }
        c.cycles.expectCount = try int("cycles.expect-count", min: 1)
        if let v = values["publish.url"] {
            for url in v.text.split(separator: " ") {
                do { c.publish.targets.append(try PublishTarget.parse(String(url))) } catch let e as BarscopeError {
                    throw BarscopeError.badValue(
                        v.origin.hasPrefix("-") && v.origin != "--set"
                            ? e.description : Self.located(v.origin, "publish", "url", e.description))
                }
            }
        }
        if let node = text("publish.node") {
            guard ScanService.isValidName(node) else {
                throw bad("publish.node", "a name of letters, digits, '.', '_', '-'")
            }
            c.publish.node = node
        }
        c.publish.spool = text("publish.spool")
        if let t = text("publish.spool-max") {
            guard let bytes = Self.byteSize(t), bytes >= 1 << 20 else {
                throw bad("publish.spool-max", "a size of at least 1MB (256MB, 2GB)")
            }
            c.publish.spoolMaxBytes = bytes
        }
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

    /// `256MB`, `2GB`, `512kB` or a number of bytes.
    public static func byteSize(_ text: String) -> Int? {
        let t = text.uppercased().replacingOccurrences(of: "IB", with: "B")
        for (suffix, scale) in [
            ("KB", 1 << 10), ("MB", 1 << 20), ("GB", 1 << 30), ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30), ("B", 1),
        ] where t.hasSuffix(suffix) {
            return Int(t.dropLast(suffix.count)).map { $0 * scale }
        }
        return Int(t)
    }
}
