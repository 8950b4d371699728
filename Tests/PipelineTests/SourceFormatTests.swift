import Barscope
import Foundation
import TestSupport
import Testing

/// Files in other containers and codecs than H.264 MP4, and still images, as `run` sources: each made here by
/// real encoders from the demo scene, then scanned and compared with the scene's truth.
@Suite(.serialized, .suiteLimit) struct SourceFormatTests {
    // 960x540: at 640x360 the smallest codes of the scene are too small to read in any container.
    static let options = DemoOptions(size: Size(width: 960, height: 540), fps: 30, frames: 45)

    /// Scans a clip with the whole frame and scores it against the demo's truth.
    func scanAndScore(_ path: String) throws -> (RunSummary, Score) {
        var c = RunConfiguration()
        c.input = try InputSource.parse(path)
        c.viewfinder = .off
        c.everyFrame = true
        let (summary, log) = try runScan(c)
        let scene = DemoScene(size: Self.options.size, fps: Self.options.fps)
        return (summary, score(log, scene: scene, frames: Self.options.frames, viewfinderOn: false))
    }

    @Test(arguments: ["vp8", "vp9"])
    func webmIsScannedFrameByFrame(codec: String) throws {
        let path = Media.folder.appendingPathComponent("demo-\(codec).webm").path
        try DemoClip.writeWebM(to: path, options: Self.options, vp9: codec == "vp9")
        let (summary, s) = try scanAndScore(path)
        print("WebM \(codec): \(s)")
        #expect(summary.frames == Self.options.frames)
        // Every code of the scene is read with its text on nearly every frame, at its true place.
        #expect(s.perCode.count == 5 && s.perCode.keys.contains("https://barscope.dev/demo"), "\(s.perCode)")
        for (text, c) in s.perCode {
            #expect(Double(c.read) >= 0.9 * Double(c.visible), "\(codec) \(text): \(c.read)/\(c.visible)")
        }
        #expect(s.phantom == 0)
    }

    @Test func matroskaIsScannedFrameByFrame() throws {
        let path = Media.folder.appendingPathComponent("demo.mkv").path
        try DemoClip.writeMatroska(to: path, options: Self.options)
        let (summary, s) = try scanAndScore(path)
        print("Matroska: \(s)")
        #expect(summary.frames == Self.options.frames)
        for (text, c) in s.perCode {
            #expect(Double(c.read) >= 0.9 * Double(c.visible), "\(text): \(c.read)/\(c.visible)")
        }
        #expect(s.phantom == 0)
    }

    /// `run label.png`: one frame, scanned once. `--record` makes a clip of it; `--frames N` repeats it N times
    /// (at `--fps`) so that the clip lasts long enough to watch, and the recording plays back with the code.
    @Test func stillImageRunsAndRecords() throws {
        let png = Media.folder.appendingPathComponent("label-run.png").path
        try DemoClip.writePNG(try EAN13.symbol("987654321012"), to: png, module: 3)
        var c = RunConfiguration()
        c.input = try InputSource.parse(png)
        guard case .image = c.input else {
            Issue.record("a PNG is a still image source, got \(c.input)")
            return
        }
        c.viewfinder = .off
        let (one, log) = try runScan(c)
        #expect(one.frames == 1)
        let appeared = log.all.compactMap { e -> String? in
            if case .appeared(_, _, let d, _) = e { return d.data }
            return nil
        }
        #expect(appeared == ["9876543210128"])

        let mp4 = Media.folder.appendingPathComponent("label-run.mp4").path
        c.recording = try Recording(path: mp4)
        c.imageFrames = 30
        c.imageFPS = 15
        let (many, _) = try runScan(c)
        #expect(many.frames == 30)
        var replay = RunConfiguration()
        replay.input = try InputSource.parse(mp4)
        replay.viewfinder = .off
        replay.everyFrame = true
        let (played, playedLog) = try runScan(replay)
        #expect(played.frames == 30, "the recording holds \(played.frames) frames")
        let readFrames = Set(playedLog.detections.filter { $0.detection.data == "9876543210128" }.map(\.frame))
        #expect(readFrames.count >= 27, "the code reads on \(readFrames.count) of 30 recorded frames")
        // 30 frames at 15 frames/s: the last one starts at 29/15 s.
        let lastPts = playedLog.detections.compactMap(\.ptsNs).max() ?? 0
        #expect(abs(Double(lastPts) / 1e9 - 29.0 / 15.0) < 0.01, "last frame at \(lastPts) ns")
    }

    /// A JPEG is a still image too (the content decides, not the name).
    @Test func jpegNamedOddlyIsAStillImage() throws {
        let path = Media.folder.appendingPathComponent("photo.data").path
        try Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, 0x4A, 0x46, 0x49, 0x46, 0, 1]).write(to: URL(fileURLWithPath: path))
        guard case .image = try InputSource.parse(path) else {
            Issue.record("JPEG magic not recognised")
            return
        }
        let mp4 = try Media.demoClip(Self.options)
        guard case .uri = try InputSource.parse(mp4) else {
            Issue.record("an MP4 is not a still image")
            return
        }
    }
}
