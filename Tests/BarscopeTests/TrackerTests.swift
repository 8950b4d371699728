import Barscope
import Testing

@Suite struct TrackerTests {
    func code(_ data: String, at x: Double) -> Detection {
        Detection(
            type: "QR-Code", data: data, quality: 1,
            polygon: [Point(x, 100), Point(x, 150), Point(x + 50, 150), Point(x + 50, 100)])
    }

    @Test func oneTrackPerCodeAcrossFramesThenLost() {
        let t = Tracker(lostAfterFrames: 3)
        var events: [Event] = []
        for f in 0..<10 {
            events += t.update(frame: f, ptsNs: UInt64(f), detections: [code("a", at: Double(100 + 5 * f))]).events
        }
        #expect(events.count == 1)
        guard case .appeared(_, _, _, let id) = events[0] else {
            Issue.record("no appeared")
            return
        }
        for f in 10..<14 { events += t.update(frame: f, ptsNs: UInt64(f), detections: []).events }
        #expect(events.count == 2)
        guard case .lost(let frame, _, let lostID, _, _, let seen) = events[1] else {
            Issue.record("no lost")
            return
        }
        #expect(lostID == id && seen == 10 && frame == 13)
    }

    @Test func sameContentFarApartIsTwoTracks() {
        let t = Tracker()
        let r = t.update(frame: 0, ptsNs: 0, detections: [code("a", at: 0), code("a", at: 900)])
        #expect(Set(r.ids).count == 2)
        let r2 = t.update(frame: 1, ptsNs: 1, detections: [code("a", at: 905), code("a", at: 3)])
        #expect(r2.ids == [r.ids[1], r.ids[0]])
        #expect(r2.events.isEmpty)
    }

    @Test func shortGapKeepsTheTrack() {
        let t = Tracker(lostAfterFrames: 5)
        let id = t.update(frame: 0, ptsNs: 0, detections: [code("a", at: 0)]).ids[0]
        _ = t.update(frame: 1, ptsNs: 1, detections: [])
        let r = t.update(frame: 3, ptsNs: 3, detections: [code("a", at: 10)])
        #expect(r.ids == [id] && r.events.isEmpty)
        #expect(t.finish(frame: 4, ptsNs: 4).count == 1)
    }
}
