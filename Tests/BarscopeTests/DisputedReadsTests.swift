import Foundation
import TestSupport
import Testing

@testable import Barscope

/// An EAN or UPC that the two decoders read as different numbers in one place: the read is handed over as disputed
/// (`BarcodeReader.takeDisputes`), and the tracker weighs the decoders' votes over the frames (`TextVotes`).
@Suite(.suiteLimit) struct DisputedReadsTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Fixtures/disputed/upca-4_13-frame08.png").standardized.path
    static let misread = "6078790522143"
    static let printed = "0059290522143"

    /// A real frame ZBar misreads on every line alike (a valid check digit): the video reader hands the misread
    /// over as disputed, boxed on the code, and the tracker does not report it.
    @Test func aMisreadZXingDisputesIsHandedOverAndNotReported() throws {
        try ImageScanner(engine: .zbar, thorough: false).withLumaPlane(ofImageAt: Self.fixture) { image in
            let zbarAlone = ZBarScanner().scan(image)
            #expect(
                zbarAlone.map(\.data).contains(Self.misread)
                    && zbarAlone.first { $0.data == Self.misread }!.quality >= 2,
                "the fixture is a frame ZBar misreads on several lines: \(zbarAlone.map { "\($0.data) q\($0.quality)" })"
            )
            let reader = BarcodeReader(engine: .zbar)
            let read = reader.read(image, mapping: CropMapping(offsetX: 480, offsetY: 150))
            #expect(read.map(\.data).contains(Self.misread), "the reader keeps it: the tracker judges")
            let disputed = reader.takeDisputes()
            #expect(disputed.map(\.data) == [Self.misread])
            // In the frame's pixels (the fixture is cut from x 480, y 150), on the code's bars.
            for corner in disputed.first?.polygon ?? [] {
                #expect(corner.x > 540 && corner.x < 940 && corner.y > 200 && corner.y < 520, "\(corner)")
            }
            #expect(reader.takeDisputes().isEmpty, "taken once")
            let tracker = Tracker()
            let ids = tracker.update(frame: 0, ptsNs: 0, detections: read, disputed: disputed).ids
            #expect(zip(read, ids).allSatisfy { $0.data != Self.misread || $1 == nil }, "\(read.map(\.data)) \(ids)")
            #expect(tracker.disagreeing == read.filter { $0.data == Self.misread }.count)
            // The printed number, which fewer of ZBar's lines read in this frame, is reported: a text the second
            // decoder disputes is no rival.
            #expect(zip(read, ids).contains { $0.data == Self.printed && $1 != nil }, "\(read.map(\.data)) \(ids)")
        }
    }

    func ean(_ data: String, lines: Int, engine: String = "zbar", at x: Double = 100) -> Detection {
        var d = Detection(
            type: "EAN-13", data: data, quality: lines,
            polygon: [Point(x, 100), Point(x, 160), Point(x + 190, 160), Point(x + 190, 100)])
        d.engine = engine
        return d
    }

    /// A text zxing-cpp disputed at a place is not reported there while ZBar goes on reading it, whatever its
    /// number of lines; another text elsewhere is.
    @Test func aDisputedTextIsNotReportedAtItsPlace() {
        let t = Tracker()
        let first = t.update(frame: 0, ptsNs: 0, detections: [], disputed: [ean("9074932437075", lines: 6)])
        #expect(first.ids.isEmpty)
        for f in 1...20 {
            let r = t.update(
                frame: f, ptsNs: UInt64(f),
                detections: [
                    ean("9074932437075", lines: 8, at: 100 + Double(f)), ean("4006381333931", lines: 3, at: 600),
                ])
            #expect(r.ids[0] == nil && r.ids[1] != nil)
        }
        #expect(t.disagreeing == 20)
        #expect(t.tracks.map(\.data) == ["4006381333931"])
    }

    /// Where zxing-cpp agrees with a text in more frames than it disputes it, the text stands.
    @Test func aTextTheSecondDecoderAgreesWithMoreOftenStands() {
        let t = Tracker()
        _ = t.update(frame: 0, ptsNs: 0, detections: [], disputed: [ean("4006381333931", lines: 4)])
        let agreed = t.update(frame: 1, ptsNs: 1, detections: [ean("4006381333931", lines: 4, engine: "both")])
        #expect(agreed.ids[0] != nil)
        let again = t.update(frame: 2, ptsNs: 2, detections: [ean("4006381333931", lines: 4)])
        #expect(again.ids[0] == agreed.ids[0])
    }

    /// ZBar disagreeing with itself at one place (a worn or wrapped print: some lines read one number, others
    /// another, frame after frame): the text more lines read over the recent frames is reported, the other never.
    @Test func theTextMoreLinesReadAtAPlaceWins() {
        let t = Tracker()
        var reported: [String: Int] = [:]
        for f in 0..<30 {
            // The misread on fewer lines, in every other frame, sometimes alone.
            var reads = [ean("0625034201058", lines: 12)]
            if f % 2 == 1 { reads.append(ean("0008700000030", lines: 5)) }
            if f % 6 == 5 { reads = [ean("0008700000030", lines: 5)] }
            let r = t.update(frame: f, ptsNs: UInt64(f), detections: reads)
            for (d, id) in zip(reads, r.ids) where id != nil { reported[d.data, default: 0] += 1 }
        }
        #expect(reported["0008700000030"] == nil)
        #expect(reported["0625034201058"] == 25)
    }

    /// Two real codes stacked close together (a photo with a second label just below the first: ean13-2_23) are two
    /// codes, however close: neither is the other's rival, and zxing-cpp's read of the one below, in the region of
    /// the one above, is no dispute of it.
    @Test func twoCodesStackedAreNotOneCodeReadTwoWays() {
        func stacked(_ data: String, lines: Int, top: Double) -> Detection {
            Detection(
                type: "EAN-13", data: data, quality: lines,
                polygon: [Point(100, top), Point(100, top + 90), Point(400, top + 90), Point(400, top)])
        }
        let t = Tracker()
        for f in 0..<20 {
            let reads = [stacked("9784872348880", lines: 40, top: 100), stacked("1920081045006", lines: 3, top: 290)]
            let r = t.update(frame: f, ptsNs: UInt64(f), detections: reads)
            #expect(r.ids.allSatisfy { $0 != nil }, "frame \(f): \(r.ids)")
        }
        var below = stacked("1920081045006", lines: 1, top: 290)
        below.polygon = [Point(100, 335), Point(100, 336), Point(400, 336), Point(400, 335)]  // a scan line
        below.bounds = Bounds(enclosing: below.polygon)
        #expect(!BarcodeReader.contradicts(below, stacked("9784872348880", lines: 40, top: 100)))
        #expect(BarcodeReader.contradicts(below, stacked("1920081045999", lines: 40, top: 290)))
    }

    /// A label swapped for another in the same place: the new one is reported at its first read, however many
    /// lines read the old one.
    @Test func aLabelSwappedInPlaceIsReportedWithinTheWindow() {
        let t = Tracker(lostAfterFrames: 15)
        for f in 0..<10 { _ = t.update(frame: f, ptsNs: UInt64(f), detections: [ean("0625034201058", lines: 30)]) }
        var firstReported: Int? = nil
        for f in 12..<40 {
            let r = t.update(frame: f, ptsNs: UInt64(f), detections: [ean("4006381333931", lines: 2)])
            if r.ids[0] != nil, firstReported == nil { firstReported = f }
        }
        // At its first read: the old text is no longer read, so nothing reads the code two ways at once.
        #expect(firstReported == 12, "first reported at \(String(describing: firstReported))")
    }
}
