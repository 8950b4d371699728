import Barscope
import TestSupport
import Testing

@Suite(.suiteLimit) struct TrackerTests {
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
    func ean(_ data: String, at x: Double, quality: Int = 1) -> Detection {
        Detection(
            type: "EAN-13", data: data, quality: quality,
            polygon: [Point(x, 100), Point(x, 160), Point(x + 190, 160), Point(x + 190, 100)])
    }

    /// A 1D read one scan line made is reported once it is read again at the same place within the window: the
    /// first frame's read is held, the second starts the track, which appeared where and when it was first read,
    /// and the held read is released with it (late, with its own frame); a misread seen in one frame only is never
    /// reported, and is counted.
    @Test func aOneLineReadWaitsForASecondFrame() {
        let t = Tracker()
        let first = t.update(frame: 0, ptsNs: 0, detections: [ean("4006381333931", at: 100)])
        #expect(first.ids == [nil] && first.events.isEmpty)
        let second = t.update(frame: 1, ptsNs: 1, detections: [ean("4006381333931", at: 104)])
        #expect(second.ids.count == 1 && second.ids[0] != nil)
        guard case .appeared(let frame, _, _, _) = second.events.first else {
            Issue.record("no appeared: \(second.events)")
            return
        }
        #expect(frame == 0)
        #expect(t.released.map(\.frame) == [0] && t.released.first?.track == second.ids[0])
        // A wrong text with a valid check digit, once, elsewhere: held, then forgotten and counted.
        _ = t.update(frame: 2, ptsNs: 2, detections: [ean("4006381333931", at: 108), ean("5901234123457", at: 600)])
        for f in 3..<20 {
            #expect(t.update(frame: f, ptsNs: UInt64(f), detections: [ean("4006381333931", at: 108)]).events.isEmpty)
        }
        #expect(t.unconfirmed == 1)
        #expect(t.tracksStarted == 1)
    }

    /// A low-margin read of another text where a code is tracked is a misread of it: dropped and counted, never a
    /// track of its own, even when it repeats; a second label beside it (over half its size away) is its own.
    @Test func aReadThatDisagreesWithTheTrackAtItsPlaceIsDropped() {
        let t = Tracker()
        _ = t.update(frame: 0, ptsNs: 0, detections: [ean("4006381333931", at: 100, quality: 5)])
        for f in 1..<4 {
            let r = t.update(
                frame: f, ptsNs: UInt64(f), detections: [ean("4006381333931", at: 100), ean("4006381333948", at: 102)])
            #expect(r.ids[1] == nil && r.events.isEmpty, "frame \(f): \(r)")
        }
        #expect(t.disagreeing == 3 && t.tracksStarted == 1)
        let beside = t.update(frame: 4, ptsNs: 4, detections: [ean("4006381333948", at: 400, quality: 3)])
        #expect(beside.ids[0] != nil && t.tracksStarted == 2)
    }

    /// Two labels of one symbology stacked, a tall one above a short one (the kit's seed 6161: an 8-digit I2/5 above a
    /// 10-digit one): their middles lie within half the tall one's diagonal, yet neither middle is on the other's
    /// code, so each is a code of its own, not a misread of the other.
    @Test func stackedLabelsOfOneSymbologyAreTwoCodes() {
        func i25(_ data: String, y0: Double, y1: Double) -> Detection {
            Detection(
                type: "I2/5", data: data, quality: 1,
                polygon: [Point(100, y0), Point(100, y1), Point(290, y1), Point(290, y0)])
        }
        let (tall, short) = (i25("43883539", y0: 100, y1: 300), i25("2190940392", y0: 310, y1: 360))
        #expect(tall.center.distance(to: short.center) <= 0.5 * tall.bounds.diagonal)
        let t = Tracker()
        for f in 0..<3 { _ = t.update(frame: f, ptsNs: UInt64(f), detections: [tall, short]) }
        #expect(t.tracksStarted == 2 && t.disagreeing == 0, "\(t.tracksStarted) tracks, \(t.disagreeing) dropped")
    }

    /// A blurred frame gives a wrong text that several of ZBar's lines agree on, beside the right text from its
    /// other lines (the real photo upce-2_03 in motion: two such tracks at once): no new code. A code whose content
    /// changes in place (the old text no longer read there) is a new code once read twice; a second decoder's
    /// agreement is one at once.
    @Test func aStrongReadThatDisagreesWithTheCodeReadThereInTheSameFrameIsDropped() {
        let t = Tracker()
        _ = t.update(frame: 0, ptsNs: 0, detections: [ean("0050968000093", at: 100, quality: 5)])
        let blurred = t.update(
            frame: 1, ptsNs: 1,
            detections: [ean("0050200009921", at: 103, quality: 2), ean("0050968000093", at: 101, quality: 40)])
        #expect(blurred.ids[0] == nil && blurred.ids[1] != nil && t.disagreeing == 1 && t.tracksStarted == 1)
        var both = ean("0052868000098", at: 103, quality: 1)
        both.engine = "both"
        #expect(t.update(frame: 2, ptsNs: 2, detections: [both]).ids[0] != nil)
        // The content changes in place (the code read a frame ago, not read now): held until read again (a misread
        // seldom repeats: the real photo upca-2_23 gave one such read in tracked mode), then reported with its own
        // frame.
        let changed = t.update(frame: 3, ptsNs: 3, detections: [ean("5901234123457", at: 101, quality: 3)])
        #expect(changed.ids == [nil] && t.tracksStarted == 2)
        let again = t.update(frame: 4, ptsNs: 4, detections: [ean("5901234123457", at: 102, quality: 3)])
        #expect(again.ids[0] != nil && t.tracksStarted == 3)
        #expect(t.released.map(\.frame) == [3])
        // Gone a while (a label swapped for another by hand): a strong read there is a new code at once.
        let swapped = t.update(frame: 9, ptsNs: 9, detections: [ean("4006381333931", at: 100, quality: 3)])
        #expect(swapped.ids[0] != nil && t.tracksStarted == 4)
    }

    /// 2D codes (error correction) and 1D reads several lines agreed on are reported at once; with one frame to
    /// confirm, so is everything.
    @Test func strongReadsStandAlone() {
        let t = Tracker()
        let r = t.update(frame: 0, ptsNs: 0, detections: [code("a", at: 0), ean("4006381333931", at: 300, quality: 2)])
        #expect(r.ids.allSatisfy { $0 != nil } && r.events.count == 2)
        let once = Tracker(confirmation: .none)
        #expect(once.update(frame: 0, ptsNs: 0, detections: [ean("4006381333931", at: 0)]).ids[0] != nil)
    }
}
