import Barscope
import Foundation
import Synchronization
import TestSupport
import Testing

/// The viewfinder changed while the graph plays (the library's `setViewfinder`), on a real H.264 clip of the demo
/// scene with its truth: on every frame, before, during and after the change, the codes reported lie inside that
/// frame's region, and the codes wholly inside it are read with their true corners. A crop and a mapping that
/// disagreed for one frame would put that frame's polygons off by the regions' offset.
@Suite(.serialized, .suiteLimit) struct LiveViewfinderTests {
    static let options = DemoOptions(size: Size(width: 960, height: 540), fps: 30, frames: 90)

    /// Runs the clip with the default 4:3 viewfinder and switches to `next` once frame 30 has been scanned.
    func runWithChange(to next: Viewfinder, animationFrames: Int) throws
        -> (log: EventLog, changedAt: Int, from: PixelRect, to: PixelRect)
    {
        var c = RunConfiguration()
        c.input = try InputSource.parse(try Media.demoClip(Self.options))
        c.viewfinder = Viewfinder()
        c.everyFrame = true
        let log = EventLog()
        let asked = Atomic<Bool>(false)
        let runner = Locked<ScanController?>(nil)
        let r = ScanController(name: "viewfinder", configuration: c) { event in
            log.append(event)
            if case .detection(let frame, _, _, _) = event, frame >= 30,
                asked.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
            {
                try? runner.withLock { $0 }?.setViewfinder(next, animationFrames: animationFrames)
            }
        }
        runner.withLock { $0 = r }
        let summary = try r.run()
        #expect(summary.frames == Self.options.frames)
        let changes = log.all.compactMap { e -> (Int, PixelRect?)? in
            if case .viewfinder(let f, _, let region) = e { return (f, region) }
            return nil
        }
        // One event where the change takes effect; an animated one also reports the region it settles at, on
        // its last step's frame.
        try #require(changes.count == (animationFrames > 1 ? 2 : 1), "viewfinder events: \(changes)")
        let from = try #require(Viewfinder().region(in: Self.options.size))
        let to = try #require(next.region(in: Self.options.size))
        if animationFrames > 1 {
            #expect(changes[1].0 == changes[0].0 + animationFrames - 1, "\(changes)")
            #expect(changes[1].1 == to, "\(changes)")
        }
        return (log, changes[0].0, from, to)
    }

    /// Checks every frame against the region it should have had.
    func check(_ log: EventLog, region: (Int) -> PixelRect) {
        let scene = DemoScene(size: Self.options.size, fps: Self.options.fps)
        var byFrame: [Int: [Detection]] = [:]
        for d in log.detections { byFrame[d.frame, default: []].append(d.detection) }
        var mustRead = 0
        var read = 0
        for n in 0..<Self.options.frames {
            let r = region(n)
            for d in byFrame[n] ?? [] {
                #expect(r.contains(all: d.polygon), "frame \(n): \(d.data) at \(d.bounds) outside \(r)")
            }
            for t in scene.placements(frame: n)
            where r.contains(all: t.polygon.map { $0 }) && t.cardRect.x >= r.x
                && t.cardRect.y >= r.y && t.cardRect.maxX <= r.maxX && t.cardRect.maxY <= r.maxY
            {
                mustRead += 1
                if let d = (byFrame[n] ?? []).first(where: { $0.data == t.symbol.text }),
                    cornerError(d.polygon, t.polygon) <= 4
                {
                    read += 1
                } else {
                    Issue.record("frame \(n): \(t.symbol.text) inside \(r) not read with its true corners")
                }
            }
        }
        #expect(mustRead > 100, "the check covers enough frames and codes: \(mustRead)")
        print("live viewfinder: read \(read) of \(mustRead)")
    }

    @Test func changeTakesEffectOnOneFrameForCropMappingAndEvents() throws {
        // From the centred 4:3 region to the left 60% of the frame.
        let next = try Viewfinder.parse(aspect: "off", region: "0.02,0.04,0.6,0.92")
        let (log, changedAt, from, to) = try runWithChange(to: next, animationFrames: 0)
        #expect(changedAt > 30 && changedAt < Self.options.frames, "\(changedAt)")
        check(log) { $0 < changedAt ? from : to }
    }

    @Test func animatedChangeAgreesOnEveryFrame() throws {
        let next = try Viewfinder.parse(aspect: "off", region: "0.02,0.04,0.6,0.92")
        let steps = 8
        let (log, changedAt, from, to) = try runWithChange(to: next, animationFrames: steps)
        check(log) { n in
            if n < changedAt { return from }
            let step = n - changedAt + 1
            return step >= steps ? to : from.interpolated(to: to, step, of: steps)
        }
    }
}

/// A stream whose size changes while it plays (as an RTSP camera switching resolution): two clips of the demo
/// scene, 960x540 then 640x360, played one after the other by `concat` in a source fragment. The region follows
/// the new size on its first frame, and the second clip's codes are read inside its own region with true corners.
@Suite(.serialized, .suiteLimit) struct ResolutionChangeTests {
    @Test func regionFollowsTheNewSize() throws {
        let first = DemoOptions(size: Size(width: 960, height: 540), fps: 30, frames: 30)
        let second = DemoOptions(size: Size(width: 640, height: 360), fps: 30, frames: 30)
        let a = try Media.demoClip(first, bFrames: false)
        let b = try Media.demoClip(second, bFrames: false)
        var c = RunConfiguration()
        let decode = "qtdemux ! h264parse ! avdec_h264"
        c.input = .launch(
            "filesrc name=a ! \(decode) ! c.  filesrc name=b ! \(decode) ! c.  concat name=c ! videoconvert",
            live: false)
        c.properties = [
            ElementProperty(element: "a", property: "location", value: a, origin: "test"),
            ElementProperty(element: "b", property: "location", value: b, origin: "test"),
        ]
        c.everyFrame = true
        let (summary, log) = try runScan(c)
        #expect(summary.frames == 60)
        let changes = log.all.compactMap { e -> (Int, PixelRect?)? in
            if case .viewfinder(let f, _, let r) = e { return (f, r) }
            return nil
        }
        let small = try #require(Viewfinder().region(in: second.size))
        try #require(changes.count == 1, "\(changes)")
        #expect(changes[0].0 == 30 && changes[0].1 == small, "\(changes)")
        let scene = DemoScene(size: second.size, fps: second.fps)
        var visible = 0
        var read = 0
        for n in 30..<60 {
            let found = log.detections.filter { $0.frame == n }.map(\.detection)
            for d in found {
                #expect(small.contains(all: d.polygon), "frame \(n): \(d.data) at \(d.bounds)")
            }
            for t in scene.placements(frame: n - 30)
            where t.cardRect.x >= small.x && t.cardRect.y >= small.y
                && t.cardRect.maxX <= small.maxX && t.cardRect.maxY <= small.maxY
            {
                visible += 1
                if let d = found.first(where: { $0.data == t.symbol.text }), cornerError(d.polygon, t.polygon) <= 4 {
                    read += 1
                }
            }
        }
        // Exactly what the second clip gives on its own, frame by frame: as if the stream had started at that size.
        var alone = RunConfiguration()
        alone.input = try InputSource.parse(b)
        alone.everyFrame = true
        let (_, aloneLog) = try runScan(alone)
        let own = Set(aloneLog.detections.map { "\($0.frame) \($0.detection.data)" })
        let after = Set(log.detections.filter { $0.frame >= 30 }.map { "\($0.frame - 30) \($0.detection.data)" })
        #expect(after == own)
        #expect(
            visible >= 60 && read >= visible * 85 / 100,
            "the second clip's codes, read in its own region with true corners: \(read) of \(visible)")
    }
}
