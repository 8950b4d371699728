import Barscope
import Foundation
import Synchronization
import Testing

/// The viewfinder changed while the graph plays (the library's `setViewfinder`), on a real H.264 clip of the demo
/// scene with its truth: on every frame, before, during and after the change, the codes reported lie inside that
/// frame's region, and the codes wholly inside it are read with their true corners. A crop and a mapping that
/// disagreed for one frame would put that frame's polygons off by the regions' offset.
@Suite(.serialized) struct LiveViewfinderTests {
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
        let runner = Mutex<ScanRunner?>(nil)
        let r = ScanRunner(configuration: c) { event in
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
        try #require(changes.count == 1, "one viewfinder event: \(changes)")
        let from = try #require(Viewfinder().region(in: Self.options.size))
        let to = try #require(next.region(in: Self.options.size))
        return (log, changes[0].0, from, to)
    }

    /// Checks every frame against the region it should have had.
    func check(_ log: EventLog, region: (Int) -> PixelRect) {
        let scene = DemoScene(size: Self.options.size, fps: Self.options.fps)
        var byFrame: [Int: [Detection]] = [:]
        for d in log.detections { byFrame[d.frame, default: []].append(d.detection) }
        var mustRead = 0, read = 0
        for n in 0..<Self.options.frames {
            let r = region(n)
            for d in byFrame[n] ?? [] {
                #expect(r.contains(all: d.polygon), "frame \(n): \(d.data) at \(d.bounds) outside \(r)")
            }
            for t in scene.placements(frame: n) where r.contains(all: t.polygon.map { $0 }) && t.cardRect.x >= r.x
                && t.cardRect.y >= r.y && t.cardRect.maxX <= r.maxX && t.cardRect.maxY <= r.maxY
            {
                mustRead += 1
                if let d = (byFrame[n] ?? []).first(where: { $0.data == t.symbol.text }), cornerError(d.polygon, t.polygon) <= 4 {
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
