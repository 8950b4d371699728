import Barscope
import Foundation
import TestSupport
import Testing

/// `--record`: the annotated MP4 decodes again through GStreamer, has every frame, and still scans.
@Suite(.serialized, .suiteLimit) struct RecordingTests {
    @Test func recordingPlaysBackWithEveryFrameAndTheSameCodes() throws {
        let frames = 75
        let path = Media.folder.appendingPathComponent("annotated.mp4").path
        var c = RunConfiguration()
        c.input = .demo(DemoOptions(size: Size(width: 960, height: 540), fps: 30, frames: frames))
        c.recording = try Recording(path: path)
        let (summary, log) = try runScan(c)
        #expect(summary.frames == frames)
        let seen = Set(
            log.all.compactMap { e -> String? in
                if case .appeared(_, _, let d, _) = e { return d.data }
                return nil
            })
        #expect(seen == ["https://barscope.dev/demo", "4006381333931", "BARSCOPE-128"])

        // Play it back: decode every frame and scan the whole frame again.
        var again = RunConfiguration()
        again.input = try InputSource.parse(path)
        again.viewfinder = .off
        again.everyFrame = true
        let (replay, replayLog) = try runScan(again)
        #expect(abs(replay.frames - frames) <= 1, "recorded \(replay.frames) frames")
        var perCode: [String: Int] = [:]
        for d in replayLog.detections { perCode[d.detection.data, default: 0] += 1 }
        for code in seen {
            #expect(Double(perCode[code] ?? 0) >= 0.9 * Double(frames), "\(code): \(perCode[code] ?? 0) frames")
        }
        // Every frame comes back with a time, in presentation order, and the first one within a frame of the start
        // (x264 with B-frames may shift the file's times a little; they are never invented or lost).
        let pts = replayLog.detections.map(\.ptsNs)
        #expect(!pts.isEmpty && pts.allSatisfy { $0 != nil }, "a replayed frame without a time")
        let times = pts.compactMap { $0 }
        #expect(times == times.sorted(), "frames come back in presentation order")
        let frameNs: UInt64 = 1_000_000_000 / 30
        #expect((times.first ?? .max) <= 2 * frameNs, "the first frame at \(times.first ?? 0) ns")
    }

    /// Matroska, and MP4 in segments: every file plays, names sort by time, no frame lost or doubled.
    @Test func matroskaAndSegmentsPlayBackWhole() throws {
        let frames = 90
        var c = RunConfiguration()
        c.input = .demo(DemoOptions(size: Size(width: 640, height: 360), fps: 30, frames: frames))
        c.recording = try Recording(path: Media.folder.appendingPathComponent("whole.mkv").path)
        _ = try runScan(c)
        var replay = RunConfiguration()
        replay.input = try InputSource.parse(c.recording!.path)
        #expect(try runScan(replay).0.frames == frames)

        let segmented = try Recording(path: Media.folder.appendingPathComponent("part.mp4").path, segmentSeconds: 1)
        c.recording = segmented
        _ = try runScan(c)
        var total = 0
        var n = 0
        while FileManager.default.fileExists(atPath: segmented.segment(n)) {
            replay.input = try InputSource.parse(segmented.segment(n))
            let played = try runScan(replay).0.frames
            #expect(played > 0, "\(segmented.segment(n)) plays")
            total += played
            n += 1
        }
        #expect(n >= 3, "3 s in 1 s segments")
        #expect(total == frames)
        #expect(segmented.segment(1).hasSuffix("part-00001.mp4"))
    }
}
