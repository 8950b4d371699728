import Barscope
import Foundation
import Synchronization

/// `barscope run [NAME|FILE.conf|demo|FILE|URI]`: the scan graph end to end.
///
/// Every flag is a `section.key=value` of a pipeline file (see `PipelineSpec`), applied after the named pipeline
/// or file, with `--set` assignments, so the command line always overrides the file.
enum RunCommand {
    /// Flags that take a value, and the pipeline key each one sets.
    static let valueFlags: [String: (section: String, key: String)] = [
        "--input": ("source", "input"), "--size": ("source", "size"), "--fps": ("source", "fps"),
        "--format": ("source", "format"),
        "--frames": ("source", "frames"), "--viewfinder": ("viewfinder", "aspect-ratio"),
        "--rtsp-transport": ("source", "rtsp-transport"), "--latency": ("source", "latency"),
        "--insets": ("viewfinder", "insets"), "--region": ("viewfinder", "region"),
        "--preferred-height": ("viewfinder", "preferred-height"),
        "--secondary": ("viewfinder", "secondary-aspect-ratio"),
        "--secondary-insets": ("viewfinder", "secondary-insets"),
        "-S": ("decoder", "symbologies"), "--scan-threads": ("decoder", "threads"), "--engine": ("decoder", "engine"),
        "--report": ("tracking", "report"), "--confirm-frames": ("tracking", "confirm-frames"),
        "--search-every": ("decoder", "search-every"), "--search-lines": ("decoder", "search-lines"),
        "--whole-search-every": ("decoder", "whole-search-every"),
        "--hard-codes": ("decoder", "hard-codes"),
        "--record": ("record", "path"),
        "--segment": ("record", "segment-seconds"), "--events": ("events", "path"),
        "--snapshots": ("snapshots", "folder"), "--serve-rtsp": ("rtsp", "serve"),
        "--cycles": ("cycles", "mode"), "--cycle-timeout": ("cycles", "timeout"), "--cycle-gap": ("cycles", "gap"),
        "--expect": ("cycles", "expect"), "--expect-count": ("cycles", "expect-count"),
        "--scene": ("source", "scene"), "--node": ("publish", "node"), "--spool": ("publish", "spool"),
        "--spool-max": ("publish", "spool-max"),
    ]
    /// Flags without a value, and the pipeline key each one turns on.
    static let switchFlags: [String: (section: String, key: String, value: String)] = [
        "--live": ("source", "live", "true"), "--tracked": ("decoder", "tracked", "true"),
        "--every-frame": ("tracking", "every-frame", "true"), "--display": ("display", "enabled", "true"),
        "--no-status": ("overlay", "status", "off"),
    ]

    static func main(_ tokens: [String]) throws -> Int32 {
        var assignments: [(section: String, key: String, value: String, origin: String)] = []
        var sets: [String] = []
        var quiet = false
        var controlPath: String? = nil
        var publishURLs: [String] = []
        var help = false
        var reconnect = ReconnectPolicy()
        var index: String? = nil
        var camera: String? = nil
        var start: Date? = nil
        var args = Arguments(command: "run", tokens)
        try args.parse { option, next in
            if let target = valueFlags[option] {
                var value = try next()
                var target = target
                if option == "--viewfinder" && (value == "off" || value == "none") {
                    target = ("viewfinder", "enabled")
                    value = "false"
                }
                assignments.append((target.section, target.key, value, option))
                // Stating a viewfinder turns it on, even over a file that turned it off.
                if target.section == "viewfinder" && target.key != "enabled" {
                    assignments.append(("viewfinder", "enabled", "true", option))
                }
                return true
            }
            if let s = switchFlags[option] {
                assignments.append((s.section, s.key, s.value, option))
                return true
            }
            switch option {
            case "--style":
                let item = try next()
                let pair = item.split(separator: "=", maxSplits: 1).map(String.init)
                guard pair.count == 2 else { throw UsageError("--style '\(item)': expected KEY=VALUE") }
                guard OverlayStyle.keys.contains(pair[0]) else {
                    throw UsageError(
                        "style '\(pair[0])': unknown (one of \(OverlayStyle.keys.joined(separator: ", ")))")
                }
                assignments.append(("overlay", pair[0], pair[1], "--style"))
            case "--set": sets.append(try next())
            case "--publish": publishURLs.append(try next())
            case "--reconnect-attempts":
                let n = try parseInt(try next(), option: "--reconnect-attempts", min: 0)
                reconnect.maxAttempts = n == 0 ? nil : n
            case "--quiet", "-q": quiet = true
            case "--control": controlPath = try next()
            case "--index": index = try next()
            case "--camera": camera = try next()
            case "--start":
                let text = try next()
                do { start = try TimeArgument.parse(text) } catch let e as BarscopeError {
                    throw UsageError("--start: \(e.description)")
                }
            case "--help", "-h": help = true
            default: return false
            }
            return true
        }
        if help {
            print(Help.run)
            return 0
        }
        if args.positionals.count > 1 {
            throw UsageError(
                "run takes one pipeline or source, got \(args.positionals.count): "
                    + args.positionals.map(Redact.uri).joined(separator: " "))
        }

        // The named pipeline or file first, then --set, then the flags.
        var spec = PipelineSpec()
        if let p = args.positionals.first {
            if p.hasSuffix(".conf") {
                guard FileManager.default.fileExists(atPath: p) else {
                    throw BarscopeError.badInput("\(p): no such file")
                }
                spec = try PipelineSpec(file: p)
            } else if let file = PipelineSpec.find(p) {
                spec = try PipelineSpec(file: file)
            } else {
                if assignments.contains(where: { $0.section == "source" && $0.key == "input" }) {
                    throw UsageError("give the source once: '\(Redact.uri(p))' or --input, not both")
                }
                try spec.set("source", "input", p, origin: "the command line")
            }
        }
        for s in sets { try spec.set(assignment: s) }
        for a in assignments {
            try spec.set(a.section, a.key, a.value, origin: a.origin)
        }
        // --publish is repeatable: every URL given (URLs hold no spaces).
        if !publishURLs.isEmpty {
            try spec.set("publish", "url", publishURLs.joined(separator: " "), origin: "--publish")
        }
        let (c, eventsPath) = try spec.configuration()
        // The run's name in topics and ids: the named pipeline's or file's, else "run".
        let instance =
            args.positionals.first.flatMap { p -> String? in
                let name = ((p as NSString).lastPathComponent as NSString).deletingPathExtension
                return PipelineSpec.find(p) != nil || p.hasSuffix(".conf") ? name : nil
            }.flatMap { ScanService.isValidName($0) ? $0 : nil } ?? "run"
        // Brokers: the spool folder and the user are checked before the pipeline starts.
        let publisher =
            try c.publish.targets.isEmpty
            ? nil : Publisher(c.publish, stateFolder: try ServeCommand.defaultStateFolder())
        // Set once, before the run starts; read for every event without a lock.
        let stamping = AtomicLazyReference<PublishChannel>()

        // A file (and any source that is not live) waits for its events' reader: nothing is dropped. Only a live
        // source feeding a reader that does not read drops events, counted on the summary line.
        let writer = try EventWriter(path: eventsPath, whenFull: c.input.isLive ? .drop : .wait)
        StopSignals.install()
        let progress = quiet ? nil : ProgressLine()
        let reporting = Locked<ScanController?>(nil)
        // The sightings index: opened (and a bad one refused) before the pipeline starts.
        let recorder = try index.map { location -> SightingRecorder in
            let store = try SightingIndexes.open(location)
            var file: String? = nil
            if case .uri(let u, _) = c.input, u.hasPrefix("file://") { file = URL(string: u)?.path }
            if case .image(_, let path) = c.input { file = path }
            let context = SightingRecorder.Context(
                camera: camera ?? (instance == "run" ? Self.cameraName(c.input) : instance), pipeline: instance,
                node: c.publish.node ?? ProcessInfo.processInfo.hostName, recording: c.recording,
                live: c.input.isLive, file: file, start: start,
                spool: (try? ServeCommand.defaultStateFolder()).map {
                    SightingIndexes.spoolFolder(in: $0, for: location)
                }, frameSeconds: RunConfiguration.frameSeconds(c.input))
            return SightingRecorder(open: { store }, context: context) { note in
                // A warning event too: the reader of the events learns that sightings wait for the index.
                progress?.note("barscope: warning: \(note)")
                reporting.load()?.report(.warning(message: note, source: "index"))
            }
        }
        // One supervisor for every run: RTSP streams reconnect once they have played (a stream that never played is
        // a mistake in the URI and fails at once); other sources end with their stream.
        let controller = ScanController(
            name: "run", configuration: c, restart: .onError, backoff: reconnect,
            condition: .networkStreamsThatPlayed
        ) { event in
            // The controller's delivery thread only: stamped and written in one order.
            writer.write(line: stamping.load()?.publish(event) ?? event.jsonLine)
            recorder?.take(event)
            // Warnings reach the reader too, not only the event stream (a damaged file, a stop under way).
            if case .warning(let message, _) = event { progress?.note("barscope: warning: \(message)") }
        }
        reporting.withLock { $0 = controller }
        defer { reporting.withLock { $0 = nil } }
        progress?.follow { [weak controller] in controller?.progress }
        if let publisher {
            let ch = publisher.channel(.controller(instance, controller))
            _ = stamping.storeIfNil(ch)
            publisher.onEvent { [weak controller] event in controller?.report(event) }
        }
        StopSignals.watch(controller) { writer.abandon() }
        let channel = try controlPath.map {
            try ControlChannel(path: $0, controller: controller) { [weak controller] in controller?.report($0) }
        }
        defer { withExtendedLifetime(channel) {} }
        let summary: RunSummary
        do {
            summary = try controller.run()
        } catch {
            progress?.end()
            publisher?.stop()
            writer.close()
            recorder?.close()
            throw error
        }
        progress?.end()
        // The index has every sighting before the run ends (a file's are written now, with their times).
        let unindexed = recorder?.close() ?? 0
        if quiet, let recorder, recorder.spooledCount > 0 || unindexed > 0 {
            // The index failed as the run ended: its warning event came after the events had ended, and a quiet run
            // prints no summary, so this line is the one place left to say so.
            var line = "barscope: warning: "
            if recorder.spooledCount > 0 {
                line += "\(recorder.spooledCount) sightings wait in the spool for the index: the next run writes them"
            }
            if unindexed > 0 {
                line += (recorder.spooledCount > 0 ? "; " : "") + "\(unindexed) sightings could not be written anywhere"
            }
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
        // What the brokers take in 3 s goes now; the rest stays in the spool for the next start.
        publisher?.stop()
        writer.close()
        if !quiet {
            let fps = String(format: "%.1f", summary.framesPerSecond)
            var line = "barscope: \(c.input): \(summary.frames) frames in \(String(format: "%.1f", summary.seconds)) s"
            line += " (\(fps) frames/s), \(summary.codes) codes"
            if summary.dropped > 0 {
                line +=
                    ", \(summary.dropped) frames " + (c.input.isLive ? "dropped to stay live" : "not scanned (stopped)")
            }
            if let l = summary.latencyMs {
                line += String(format: ", latency %.1f ms median, %.1f ms p95", l.p50, l.p95)
            }
            if let cycles = controller.cycles.counts.summary { line += ", " + cycles }
            if let r = c.recording { line += ", recorded to \(r.segmentSeconds == nil ? r.path : r.segmentPattern)" }
            // Standard error is the one place left to say so when the events' reader is what fell behind.
            let dropped = writer.dropped
            if dropped > 0 { line += ", \(dropped) events dropped (the reader fell behind)" }
            if let recorder {
                line += ", \(recorder.writtenCount) sightings indexed"
                if recorder.spooledCount > 0 {
                    line += " (\(recorder.spooledCount) wait in the spool for the index: the next run writes them)"
                }
                if unindexed > 0 { line += " (\(unindexed) could not be written anywhere)" }
            }
            for (sink, k) in publisher?.counters ?? [] {
                line += ", \(k.published) published to \(sink)"
                if k.depth > 0 { line += " (\(k.depth) wait in the spool)" }
                let lost = k.dropped.values.reduce(0, +)
                if lost > 0 { line += " (\(lost) dropped: the spool was full)" }
            }
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
        // Debug builds: the project's lock acquisitions over the run (the per-frame budget's test reads it).
        if ProcessInfo.processInfo.environment["BARSCOPE_COUNT_LOCKS"] != nil, let n = LockCount.acquisitions {
            FileHandle.standardError.write(Data("barscope: debug: \(n) lock acquisitions\n".utf8))
        }
        if unindexed > 0 && quiet {
            FileHandle.standardError.write(
                Data("barscope: \(unindexed) sightings could not be written to the index\n".utf8))
        }
        // Stopped by a signal: 128 + its number; by a `stop` command: a normal end.
        // A signal stops the run wherever it is (a stream's reconnection wait too): 128 + its number.
        if StopSignals.last != 0 { return 128 + StopSignals.last }
        return 0
    }

    /// A run's camera in the index when none is named: the file's or stream's name, the device, or "demo".
    static func cameraName(_ input: InputSource) -> String {
        switch input {
        case .uri(let u, _):
            if u.hasPrefix("file://") { return (URL(string: u)?.lastPathComponent) ?? "file" }
            return URL(string: u)?.host ?? "stream"
        case .image(_, let path): return (path as NSString).lastPathComponent
        default: return input.description
        }
    }
}
