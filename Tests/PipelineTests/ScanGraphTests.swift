import Barscope
import Foundation
import TestSupport
import Testing

/// The scan graph end to end on a real H.264 MP4 of the demo scene: uridecodebin → tee → videocrop → appsink →
/// ZBar, compared frame by frame with the scene's truth.
@Suite(.serialized, .suiteLimit) struct ScanGraphTests {
    static let options = DemoOptions(size: Size(width: 960, height: 540), fps: 30, frames: 90)

    func configuration(viewfinder: Viewfinder) throws -> RunConfiguration {
        var c = RunConfiguration()
        c.input = try InputSource.parse(try Media.demoClip(Self.options))
        c.viewfinder = viewfinder
        c.everyFrame = true
        return c
    }

    /// A graph naming an element this machine lacks is told by GStreamer's parse error code (not its wording),
    /// the element named (every element of the package map is installed here, so no package is expected).
    @Test func aMissingElementIsNamed() {
        #expect(throws: BarscopeError.missingElement(name: "nosuchelementxyz", package: nil)) {
            _ = try Pipeline(launch: "videotestsrc num-buffers=1 ! nosuchelementxyz ! fakesink")
        }
    }

    @Test func wholeFrameReadsEveryCodeWithTruePolygons() throws {
        let (summary, log) = try runScan(try configuration(viewfinder: .off))
        let scene = DemoScene(size: Self.options.size, fps: Self.options.fps)
        let s = score(log, scene: scene, frames: Self.options.frames, viewfinderOn: false)
        print("viewfinder off: \(s)")
        #expect(summary.frames == Self.options.frames)
        #expect(scene.placements(frame: 0).count == 5, "the demo scene at 960x540 has five codes")
        for (text, c) in s.perCode {
            #expect(Double(c.read) >= 0.95 * Double(c.visible), "\(text): \(c.read)/\(c.visible)")
        }
        #expect(s.phantom == 0)
    }

    @Test func viewfinderCropsAndKeepsFullFrameCoordinates() throws {
        let (_, log) = try runScan(try configuration(viewfinder: Viewfinder()))
        let scene = DemoScene(size: Self.options.size, fps: Self.options.fps)
        let s = score(log, scene: scene, frames: Self.options.frames, viewfinderOn: true)
        print("viewfinder 4:3: \(s)")
        #expect(s.perCode.count == 3, "three codes move inside the default viewfinder")
        for (text, c) in s.perCode {
            #expect(Double(c.read) >= 0.95 * Double(c.visible), "\(text): \(c.read)/\(c.visible)")
        }
        // Nothing outside the region is reported, and everything reported lies inside it in full-frame pixels.
        #expect(s.phantom == 0)
        let region = try #require(Viewfinder().region(in: Self.options.size))
        for d in log.detections {
            #expect(region.contains(all: d.detection.polygon), "\(d.detection.data) at \(d.detection.polygon)")
            #expect(d.detection.inViewfinder)
        }
    }

    /// Tracked mode (full searches every 4th frame, rescans around the codes in between): the same truth holds,
    /// and every code is reported from the first frame on.
    @Test func trackedModeKeepsRecallAndPolygons() throws {
        var c = try configuration(viewfinder: .off)
        c.tracked = true
        let (summary, log) = try runScan(c)
        let scene = DemoScene(size: Self.options.size, fps: Self.options.fps)
        let s = score(log, scene: scene, frames: Self.options.frames, viewfinderOn: false)
        print("tracked: \(s)")
        #expect(summary.frames == Self.options.frames)
        for (text, code) in s.perCode {
            #expect(Double(code.read) >= 0.95 * Double(code.visible), "\(text): \(code.read)/\(code.visible)")
        }
        #expect(s.phantom == 0)
        let firstFrame = Set(log.detections.filter { $0.frame == 0 }.map(\.detection.data))
        #expect(firstFrame.count == 5, "a search on frame 0 finds every code at once")
    }

    /// The latency from a frame's arrival to its results is measured and reported at the end.
    @Test func latencyIsReported() throws {
        let (summary, log) = try runScan(try configuration(viewfinder: Viewfinder()))
        let latency = try #require(summary.latencyMs)
        #expect(latency.p50 > 0 && latency.p95 >= latency.p50)
        guard case .eos(_, _, let p50, let p95, _) = try #require(log.all.last) else {
            Issue.record("the last event is not eos")
            return
        }
        #expect(p50 == latency.p50 && p95 == latency.p95)
    }
}
