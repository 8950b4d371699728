import Barscope
import Foundation
import TestSupport
import Testing

/// The shipped pipeline files run to completion as they are, with only the input and output paths overridden
/// (as `--set` does): the file-based ones on a demo clip, the RTSP ones against a gst-rtsp-server on loopback.
@Suite(.serialized, .suiteLimit) struct ShippedPipelineTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../pipelines").standardized

    func spec(_ name: String, _ overrides: [String]) throws -> RunConfiguration {
        var spec = try PipelineSpec(file: Self.folder.appendingPathComponent("\(name).conf").path)
        for o in overrides { try spec.set(assignment: o) }
        return try spec.configuration().0
    }

    static func appeared(_ log: EventLog) -> Set<String> {
        Set(
            log.all.compactMap {
                if case .appeared(_, _, let d, _) = $0 { return d.data }
                return nil
            })
    }

    @Test func demoRuns() throws {
        let (summary, log) = try runScan(try spec("demo", ["source.frames=60"]))
        #expect(summary.frames == 60)
        #expect(Self.appeared(log) == ["https://barscope.dev/demo", "4006381333931", "BARSCOPE-128"])
    }

    /// Four parcels of the conveyor: the three with a label give their cycles (auto), with their verdicts.
    @Test func conveyorRuns() throws {
        let (_, log) = try runScan(
            try spec("conveyor", ["source.frames=430", "source.live=false", "source.size=960x540"]))
        let results = log.all.compactMap { e -> String? in
            if case .cycle(let c, _) = e { return c.outcome.rawValue }
            return nil
        }
        #expect(results == ["good", "multiple", "mismatch"])
    }

    @Test func fileAnnotateRuns() throws {
        let clip = try Media.demoClip(DemoOptions(size: Size(width: 640, height: 360), fps: 30, frames: 45))
        let out = Media.folder.appendingPathComponent("shipped-annotated.mp4").path
        let (summary, log) = try runScan(try spec("file-annotate", ["source.input=\(clip)", "record.path=\(out)"]))
        #expect(summary.frames == 45)
        #expect(log.detections.count > 45, "every-frame detections")
        var replay = RunConfiguration()
        replay.input = try InputSource.parse(out)
        #expect(try runScan(replay).0.frames == 45, "the annotated copy plays back whole")
    }

    @Test func rtspRecordRuns() throws {
        let clip = try Media.demoClip(DemoOptions(size: Size(width: 640, height: 360), fps: 30, frames: 60))
        let server = try testRTSPServer(clip: clip)
        let out = Media.folder.appendingPathComponent("shipped-camera.mkv").path
        let c = try spec(
            "rtsp-record", ["source.input=\(server.url)", "record.path=\(out)", "record.segment-seconds=1"])
        let (summary, log) = try runScan(c)
        expectLiveFrames(summary, delivered: Sanitizer.atLeast(50))
        #expect(!Self.appeared(log).isEmpty)
        let segments = try FileManager.default.contentsOfDirectory(atPath: Media.folder.path)
            .filter { $0.hasPrefix("shipped-camera-") && $0.hasSuffix(".mkv") }
        #expect(segments.count >= 2, "segments of a second: \(segments)")
        withExtendedLifetime(server) {}
    }

    @Test func rtspRestreamRuns() throws {
        let clip = try Media.demoClip(DemoOptions(size: Size(width: 640, height: 360), fps: 30, frames: 60))
        let server = try testRTSPServer(clip: clip)
        let c = try spec("rtsp-restream", ["source.input=\(server.url)", "rtsp.serve=127.0.0.1:0/dock"])
        let (summary, log) = try runScan(c)
        expectLiveFrames(summary, delivered: Sanitizer.atLeast(50))
        #expect(
            log.all.contains {
                if case .serving(let url) = $0 { return url.hasPrefix("rtsp://127.0.0.1:") }
                return false
            })
        #expect(!Self.appeared(log).isEmpty)
        withExtendedLifetime(server) {}
    }
}
