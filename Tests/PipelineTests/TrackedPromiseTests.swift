import Barscope
import Foundation
import TestSupport
import Testing

/// Tracked mode's promise (docs/performance.md): "a new code is reported within 3 frames" of its appearance,
/// checked on every code that comes into view during a clip, not only those already there on frame 0. The clip is
/// the conveyor scene at 1080p (the size docs/performance.md's tracked figures are for, where searches run at half size),
/// H.264 through x264 like any other test media: parcels ride in from the left edge, so their codes appear on
/// frames that fall on several phases of the 4-frame search cycle, the worst one (the frame after a search)
/// included. The truth is the scene's own (what `barscope generate --scene conveyor --truth` writes).
@Suite(.serialized, .suiteLimit) struct TrackedPromiseTests {
    static func options(_ size: Size) -> DemoOptions {
        var o = DemoOptions(size: size, fps: 30, frames: 600)
        o.scene = .conveyor
        return o
    }
    static let sizes = [Size(width: 1920, height: 1080)]
    /// "Within 3 frames": reported on the frame the code appears on or one of the 3 after it (a search every 4th
    /// frame finds it on the next search at the latest).
    static let promisedDelay = 3

    struct Appearance: CustomStringConvertible {
        let type: String
        let data: String
        /// The first frame with the code's whole card (symbol and quiet zone) inside the picture: the first frame a
        /// reader can be asked to read it on.
        let frame: Int
        var description: String { "\(data) (\(type)) from frame \(frame)" }
    }

    /// Every code's appearances: each run of frames where its whole card is inside the picture starts one.
    static func appearances(_ scene: DemoScene, frames: Int) -> [Appearance] {
        let picture = PixelRect(x: 0, y: 0, width: scene.size.width, height: scene.size.height)
        var inView: Set<String> = []
        var found: [Appearance] = []
        for n in 0..<frames {
            var now: Set<String> = []
            for p in scene.placements(frame: n) {
                let c = p.cardRect
                guard c.x >= picture.x, c.y >= picture.y, c.maxX <= picture.maxX, c.maxY <= picture.maxY else {
                    continue
                }
                let key = p.symbol.type + "\u{0}" + p.symbol.text
                now.insert(key)
                if !inView.contains(key) {
                    found.append(Appearance(type: p.symbol.type, data: p.symbol.text, frame: n))
                }
            }
            inView = now
        }
        return found
    }

    /// For each appearance, the frames from it to the first detection of that code at or after it (nil: never).
    static func delays(_ appearances: [Appearance], in log: EventLog) -> [(Appearance, Int?)] {
        let detections = log.detections
        return appearances.map { a in
            let first =
                detections.filter { $0.frame >= a.frame && $0.detection.type == a.type && $0.detection.data == a.data }
                .map(\.frame).min()
            return (a, first.map { $0 - a.frame })
        }
    }

    func configuration(_ options: DemoOptions, tracked: Bool) throws -> RunConfiguration {
        var c = RunConfiguration()
        c.input = try InputSource.parse(try Media.demoClip(options))
        c.viewfinder = .off
        c.everyFrame = true
        c.tracked = tracked
        return c
    }

    @Test(arguments: sizes) func everyNewCodeIsReportedWithinThreeFrames(size: Size) throws {
        let options = Self.options(size)
        let scene = DemoScene(size: options.size, fps: options.fps, kind: .conveyor)
        let appearances = Self.appearances(scene, frames: options.frames)
        // Parcels 0, 2 (two labels), 3 and 4 come into view: five codes, on frames of more than one search phase.
        #expect(appearances.count == 5, "\(appearances)")
        #expect(Set(appearances.map { $0.frame % 4 }).count >= 3, "\(appearances)")
        // Searches run on frames 0, 4, 8, ...: a code that appears on the frame after one waits longest, 3 frames.
        #expect(appearances.contains { $0.frame % 4 == 1 }, "\(appearances)")

        // Every frame scanned whole: when each code can first be read at all (what the tracked run is held to).
        let (fullSummary, fullLog) = try runScan(try configuration(options, tracked: false))
        #expect(fullSummary.frames == options.frames)
        let readable = Self.delays(appearances, in: fullLog)
        print(
            "tracked promise, \(size.width)x\(size.height), every frame scanned: "
                + readable.map { "\($0.0): +\($0.1.map(String.init) ?? "never")" }.joined(separator: "; "))
        for (a, delay) in readable {
            #expect(
                delay == 0,
                "a full scan of every frame reads \(a) on its first frame (delay \(String(describing: delay)))")
        }

        let (summary, log) = try runScan(try configuration(options, tracked: true))
        #expect(summary.frames == options.frames)
        let measured = Self.delays(appearances, in: log)
        let worst = measured.map { $0.1 ?? Int.max }.max() ?? 0
        print(
            "tracked promise, \(size.width)x\(size.height), tracked: "
                + measured.map { "\($0.0): +\($0.1.map(String.init) ?? "never")" }.joined(separator: "; ")
                + "; worst delay \(worst == Int.max ? "never reported" : "\(worst) frames")")
        // The promise itself, for every code: no allowance. (Until 2026-12-02 the second of parcel 2's stacked
        // EAN-13 labels came 4 frames late in one run of three on a loaded machine, and this was a known issue;
        // since frames between searches read what came into view (bd0e446) the codes that appear between searches
        // are read on their first frame: 2026-12-06, 30 runs, 15 of them beside two busy loops on this 2-core
        // machine, gave +0 for those four and +1 for WRONG-3, which appears on the frame before a search.)
        for (a, delay) in measured {
            let d = try #require(delay, "tracked mode never reported \(a)")
            #expect(
                d <= Self.promisedDelay,
                "tracked mode reported \(a) \(d) frames late (promised: within \(Self.promisedDelay))")
        }
        // Nothing reported that the scene does not show.
        let shown = Set(appearances.map { $0.type + "\u{0}" + $0.data })
        let phantoms = log.detections.filter { !shown.contains($0.detection.type + "\u{0}" + $0.detection.data) }
        #expect(phantoms.isEmpty, "\(phantoms.map { "\($0.frame): \($0.detection.data)" })")
    }

    /// The appearances are found from the truth as the test means them: a code counts from the first frame its
    /// whole card is in the picture, and one that leaves and comes back appears again.
    @Test(arguments: sizes) func appearancesFollowTheTruth(size: Size) {
        let scene = DemoScene(size: size, fps: 30, kind: .conveyor)
        let all = Self.appearances(scene, frames: Self.options(size).frames)
        for a in all {
            let card = { (n: Int) in
                scene.placements(frame: n).first { $0.symbol.text == a.data }.map(\.cardRect)
            }
            guard let now = card(a.frame) else {
                Issue.record("\(a): not in the scene on its own frame")
                continue
            }
            #expect(now.x >= 0 && now.maxX <= scene.size.width, "\(a)")
            if let before = card(a.frame - 1) { #expect(before.x < 0, "\(a): whole a frame earlier") }
        }
        // The moving-codes scene shows all its codes from frame 0 and keeps them in view.
        let codes = DemoScene(size: size, fps: 30)
        #expect(Self.appearances(codes, frames: 90).map(\.frame) == Array(repeating: 0, count: 5))
    }
}
