import Barscope
import Foundation

/// `barscope run [demo|FILE|URI]`: the scan graph end to end.
enum RunCommand {
    static func main(_ tokens: [String]) throws -> Int32 {
        var c = RunConfiguration()
        var inputText: String? = nil
        var demo = DemoOptions()
        var eventsPath = "-"
        var recordPath: String? = nil
        var segmentSeconds: Int? = nil
        var aspectText: String? = nil, insetsText: String? = nil, regionText: String? = nil
        var preferredHeight: Double? = nil
        var secondary: AspectRatio? = nil
        var secondaryInsets: String? = nil
        var quiet = false
        var help = false
        var args = Arguments(command: "run", tokens)
        try args.parse { option, next in
            switch option {
            case "--input": inputText = try next()
            case "--events": eventsPath = try next()
            case "--every-frame": c.everyFrame = true
            case "--record": recordPath = try next()
            case "--segment":
                segmentSeconds = try parseInt(try next(), option: "--segment", min: 1)
            case "--display": c.display = true
            case "--snapshots": c.snapshotFolder = try next()
            case "--style":
                let item = try next()
                let pair = item.split(separator: "=", maxSplits: 1).map(String.init)
                guard pair.count == 2 else { throw UsageError("--style '\(item)': expected KEY=VALUE") }
                try c.style.set(pair[0], to: pair[1])
            case "--no-status": c.style.showStatus = false
            case "--viewfinder": aspectText = try next()
            case "--insets": insetsText = try next()
            case "--region": regionText = try next()
            case "--secondary":
                let text = try next()
                guard let ratio = AspectRatio(parsing: text) else {
                    throw UsageError("--secondary '\(text)': expected W:H with both sides positive (1:1)")
                }
                secondary = ratio
            case "--secondary-insets":
                secondaryInsets = try next()
            case "--preferred-height":
                preferredHeight = Double(try parseInt(try next(), option: "--preferred-height", min: 1))
            case "-S": try c.scanner.add(try next())
            case "--size": demo.size = try parseSize(try next(), option: "--size")
            case "--fps": demo.fps = try parseInt(try next(), option: "--fps", min: 1)
            case "--frames": demo.frames = try parseInt(try next(), option: "--frames")
            case "--live": demo.live = true
            case "--scan-threads": c.scanThreads = try parseInt(try next(), option: "--scan-threads", min: 1)
            case "--tracked": c.tracked = true
            case "--search-every":
                c.tracked = true
                c.trackedInterval = try parseInt(try next(), option: "--search-every", min: 1)
            case "--quiet", "-q": quiet = true
            case "--help", "-h": help = true
            default: return false
            }
            return true
        }
        if help {
            print(Help.run)
            return 0
        }
        if regionText != nil && (aspectText != nil || insetsText != nil || preferredHeight != nil) {
            throw UsageError(
                "give the viewfinder either as --region (normalised x,y,w,h) or as --viewfinder/--insets/"
                    + "--preferred-height, not both")
        }
        do {
            c.viewfinder = try Viewfinder.parse(aspect: aspectText ?? "4:3", insets: insetsText ?? "20", region: regionText)
        } catch let e as BarscopeError {
            throw UsageError("--\(e.description)")
        }
        if let preferredHeight { c.viewfinder.preferredHeight = preferredHeight }
        c.viewfinder.secondaryAspectRatio = secondary
        if let secondaryInsets {
            do { c.viewfinder.secondaryMinimumInset = try Viewfinder.parseInsets(secondaryInsets) } catch let e as BarscopeError {
                throw UsageError("--secondary-\(e.description)")
            }
        }
        if segmentSeconds != nil && recordPath == nil { throw UsageError("--segment needs --record PATH") }
        if let recordPath { c.recording = try Recording(path: recordPath, segmentSeconds: segmentSeconds) }
        if args.positionals.count > 1 {
            throw UsageError("run takes one source, got \(args.positionals.count): \(args.positionals.joined(separator: " "))")
        }
        if let p = args.positionals.first {
            if inputText != nil { throw UsageError("give the source once: '\(p)' or --input, not both") }
            inputText = p
        }
        // A window syncs to the clock, so even the non-live demo plays at its frame rate there, and stays
        // frame-accurate (each frame drawn with its own detections); --live makes it behave like a camera.
        c.input = try InputSource.parse(inputText ?? "demo", demo: demo)

        let writer = try EventWriter(path: eventsPath)
        StopSignals.install()
        let summary = try ScanRunner(configuration: c) { writer.write($0) }.run()
        if !quiet {
            let fps = String(format: "%.1f", summary.framesPerSecond)
            var line = "barscope: \(c.input): \(summary.frames) frames in \(String(format: "%.1f", summary.seconds)) s"
            line += " (\(fps) frames/s), \(summary.codes) codes"
            if let l = summary.latencyMs {
                line += String(format: ", latency %.1f ms median, %.1f ms p95", l.p50, l.p95)
            }
            if let r = c.recording { line += ", recorded to \(r.segmentSeconds == nil ? r.path : r.segmentPattern)" }
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
        if summary.interrupted { return 128 + StopSignals.last }
        return 0
    }
}
