import Barscope
import Foundation
import TestSupport
import Testing

/// Test media made by the tests themselves, through real encoders, in a temporary folder per process.
enum Media {
    static let folder: URL = {
        ScratchFolder.make("barscope-tests")
    }()

    private static let made = Locked<[String: String]>([:])

    /// An H.264 MP4 of the demo scene (made once per scene, size and length).
    /// Suites run in parallel and share clips: one is written whole before anyone reads it (a suite that asked
    /// while another was still encoding the same clip once read half a file).
    static func demoClip(_ options: DemoOptions, bFrames: Bool = true) throws -> String {
        let scene = options.scene == .codes ? "" : "-\(options.scene.rawValue)"
        let name =
            "demo\(scene)-\(options.size.width)x\(options.size.height)-\(options.frames)\(bFrames ? "" : "-nob").mp4"
        let path = folder.appendingPathComponent(name).path
        writing.lock()
        defer { writing.unlock() }
        if made.withLock({ $0[name] }) != nil { return path }
        try DemoClip.writeMP4(to: path, options: options, bFrames: bFrames)
        made.withLock { $0[name] = path }
        return path
    }
    private static let writing = NSLock()
}

/// Frames that have passed the tee of a controller's running pipeline so far (scanned or skipped by the scanner;
/// the recording gets each of them), 0 between runs.
func framesThroughTheTee(_ controller: ScanController) -> Int {
    controller.progress.map { $0.frames + $0.framesDropped } ?? 0
}

/// Collects a run's events (they arrive on GStreamer's threads).
final class EventLog: Sendable {
    private let events = Locked<[Event]>([])
    func append(_ e: Event) { events.withLock { $0.append(e) } }
    var all: [Event] { events.withLock { $0 } }
    var detections: [(frame: Int, ptsNs: UInt64?, detection: Detection)] {
        all.compactMap {
            if case .detection(let f, let p, let d, _) = $0 { return (f, p, d) }
            return nil
        }
    }
}

/// Runs the scan graph and returns its events.
func runScan(_ c: RunConfiguration) throws -> (RunSummary, EventLog) {
    let log = EventLog()
    let summary = try ScanController(name: "test", configuration: c) { log.append($0) }.run()
    return (summary, log)
}

/// A live run's frames: at least `delivered` reached the tee, each one scanned or dropped, and the scanner kept up
/// with its share (`Sanitizer.liveScanned`).
func expectLiveFrames(
    _ s: RunSummary, delivered: Int, sourceLocation: SourceLocation = #_sourceLocation
) {
    let counts = "in \(s.framesIn), scanned \(s.frames), dropped \(s.dropped)"
    #expect(s.framesIn >= delivered, "the source delivered too few: \(counts)", sourceLocation: sourceLocation)
    #expect(s.framesIn == s.frames + s.dropped, "frames unaccounted: \(counts)", sourceLocation: sourceLocation)
    #expect(
        s.frames >= Sanitizer.liveScanned(of: s.framesIn), "the scanner fell far behind: \(counts)",
        sourceLocation: sourceLocation)
}

/// Largest distance from each truth corner to the nearest detected corner.
func cornerError(_ found: [Point], _ truth: [Point]) -> Double {
    truth.map { t in found.map { $0.distance(to: t) }.min() ?? .infinity }.max() ?? .infinity
}

/// Scores detections against the demo scene's truth, frame by frame.
struct Score: CustomStringConvertible {
    var visible = 0  // (frame, code) pairs that should be read
    var read = 0  // read with the right text and corners within tolerance
    var misplaced = 0  // right text, corners off
    var phantom = 0  // reported but not in the truth (or outside the viewfinder when it is on)
    var worstError = 0.0
    var perCode: [String: (visible: Int, read: Int)] = [:]
    var recall: Double { visible == 0 ? 0 : Double(read) / Double(visible) }
    var description: String {
        "read \(read)/\(visible) (\(String(format: "%.1f", recall * 100))%), misplaced \(misplaced), "
            + "phantom \(phantom), worst corner error \(String(format: "%.1f", worstError)) px, per code \(perCode)"
    }
}

func score(
    _ log: EventLog, scene: DemoScene, frames: Int, viewfinderOn: Bool, tolerance: Double = 4
) -> Score {
    var s = Score()
    var byFrame: [Int: [Detection]] = [:]
    for d in log.detections { byFrame[d.frame, default: []].append(d.detection) }
    for n in 0..<frames {
        let truth = scene.placements(frame: n).filter { !viewfinderOn || $0.insideViewfinder }
        var found = byFrame[n] ?? []
        for t in truth {
            s.visible += 1
            s.perCode[t.symbol.text, default: (0, 0)].visible += 1
            guard let i = found.firstIndex(where: { $0.data == t.symbol.text && $0.type == t.symbol.type }) else {
                continue
            }
            let d = found.remove(at: i)
            let err = cornerError(d.polygon, t.polygon)
            s.worstError = max(s.worstError, err)
            if err <= tolerance {
                s.read += 1
                s.perCode[t.symbol.text]!.read += 1
            } else {
                s.misplaced += 1
            }
        }
        s.phantom += found.count
    }
    return s
}
