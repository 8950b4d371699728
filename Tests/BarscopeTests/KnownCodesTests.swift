import Foundation
import TestSupport
import Testing

@testable import Barscope

/// A frame's second look at the codes the frames before it read (`KnownCodes`, `BarcodeReader.withKnownCodes`).
@Suite(.suiteLimit) struct KnownCodesTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Fixtures/known-codes/ean13-3_34-frame24.jpg").standardized.path
    /// Where frame 23 of the clip read the code (full-frame pixels).
    static let frame23 = [Point(483.9, 212.5), Point(432, 317.4), Point(856.9, 468), Point(892.4, 349.5)]

    /// A frame of a real clip that ZBar misses, and a code the frames before it read.
    struct Missed {
        var file: String
        var type: String
        var text: String
        /// Where the frame before read it (full-frame pixels).
        var polygon: [Point]
        /// A text the frame does not hold there.
        var otherText: String

        static let ean13 = Missed(
            file: "ean13-3_34-frame24.jpg", type: "EAN-13", text: "9780201310054", polygon: KnownCodesTests.frame23,
            otherText: "9780201310061")
        static let shadedQR = Missed(
            file: "qrcode-4_41-frame42.jpg", type: "QR-Code", text: "http://code.google.com/p/zxing/",
            polygon: [Point(541.1, 152.9), Point(483, 401.3), Point(705.4, 436.8), Point(772.7, 208.6)],
            otherText: "http://example.com/")

        /// The frame's luma, after checking that ZBar alone reads nothing in it.
        func withFrame(_ body: (LumaImage, BarcodeReader) -> Void) throws {
            let path = URL(fileURLWithPath: KnownCodesTests.fixture).deletingLastPathComponent()
                .appendingPathComponent(file).path
            let reader = BarcodeReader(engine: .zbar)
            try ImageScanner(engine: .zbar, thorough: false).withLumaPlane(ofImageAt: path) { image in
                let plain = reader.read(image)
                #expect(plain.isEmpty, "the fixture is a frame ZBar misses: \(plain.map(\.data))")
                body(image, reader)
            }
        }

        /// Every corner of `read` within `pixels` of where the frame before had the code (it moved a little since).
        func expectOnTheCode(_ read: Detection?, within pixels: Double) {
            #expect(read != nil)
            for corner in read?.polygon ?? [] {
                #expect(polygon.map { $0.distance(to: corner) }.min()! < pixels, "\(read?.polygon ?? [])")
            }
        }

        /// The second look at the frame for `text` (or `otherText`): what it reads.
        func look(for text: String, in image: LumaImage, with reader: BarcodeReader) -> [Detection] {
            let known = KnownCodes.Code(type: type, data: text, polygon: polygon, sequence: 0)
            return reader.withKnownCodes([known], missingFrom: [], in: image, mapping: CropMapping(), viewfinder: nil)
        }
    }

    /// A real code in motion that ZBar misses in one frame is read there as the known code it was a frame before,
    /// boxed on its bars; a known text the frame does not hold there is not read (a second look confirms, it never
    /// reads something new).
    @Test func aCodeMissedBetweenFramesThatReadItIsReadAsTheKnownCode() throws {
        let missed = Missed.ean13
        try missed.withFrame { image, reader in
            let found = missed.look(for: missed.text, in: image, with: reader)
            #expect(found.map(\.data) == [missed.text])
            missed.expectOnTheCode(found.first, within: 12)
            #expect(missed.look(for: missed.otherText, in: image, with: reader).isEmpty)
        }
    }

    /// A known code neither of ZBar's looks reads again (a real QR code in motion, shaded and blurred) is read by
    /// zxing-cpp on its region, boxed on the code: the third look, still only for the known text.
    @Test func aKnownCodeZBarCannotReadAgainIsReadByZXing() throws {
        let missed = Missed.shadedQR
        try missed.withFrame { image, reader in
            let found = missed.look(for: missed.text, in: image, with: reader)
            #expect(found.map(\.data) == [missed.text])
            #expect(found.first?.engine == "zxing", "ZBar's own looks read it: the fixture no longer needs the third")
            missed.expectOnTheCode(found.first, within: 8)
            #expect(missed.look(for: missed.otherText, in: image, with: reader).isEmpty)
        }
    }

    /// Tracked mode does the same for a code it follows: where ZBar's rescans around it (sparse lines, every line)
    /// miss it, the known code's looks read it where it should be.
    @Test func aFollowedCodeZBarLosesIsReadWhereItShouldBe() throws {
        let missed = Missed.shadedQR
        try missed.withFrame { image, reader in
            let followed = Expected(
                detection: Detection(type: missed.type, data: missed.text, quality: 1, polygon: missed.polygon),
                hasVelocity: false)
            let found = TrackedRegions.rescan(
                image, around: [followed], mapping: CropMapping(), viewfinder: nil, with: reader)
            #expect(found.map(\.data) == [missed.text])
            #expect(found.first?.engine == "zxing")
            missed.expectOnTheCode(found.first, within: 8)
        }
    }

    /// A 1D read with no height (a scan line: the bars' ends too faint to fit) takes the known outline, moved
    /// across the bars to where the read lies; a read with an outline of its own keeps it.
    @Test func aReadWithNoHeightTakesTheKnownOutlineMovedAcrossTheBars() {
        let known = [Point(100, 50), Point(100, 150), Point(300, 150), Point(300, 50)]
        let line = [Point(112, 97), Point(112, 97.5), Point(312, 97.5), Point(312, 97)]
        let moved = BarcodeReader.outline(of: line, across: Point(1, 0), known: known)
        #expect(moved == known.map { Point($0.x + 12, $0.y) })
        let boxed = [Point(112, 40), Point(112, 160), Point(312, 160), Point(312, 40)]
        #expect(BarcodeReader.outline(of: boxed, across: Point(1, 0), known: known) == boxed)
    }

    /// A frame's known codes are those read `lag` to `lag + window - 1` frames before it (never the frame just
    /// before, which is most often still being read), each at its latest place.
    @Test func codesAreKnownFromTheFramesBeforeTheLastOne() {
        let memory = KnownCodes(window: 2, inOrder: false)
        let code = Detection(type: "EAN-13", data: "4006381333931", quality: 3, polygon: Self.frame23)
        memory.record(0, [code])
        memory.record(1, [])
        #expect(memory.recent(before: 1).isEmpty)
        #expect(memory.recent(before: 2).map(\.data) == ["4006381333931"])
        #expect(memory.recent(before: 3).map(\.sequence) == [0])
        memory.record(2, [])
        #expect(memory.recent(before: 4).isEmpty, "missed in two frames in a row: no longer looked for")
        var moved = code
        moved.polygon = Self.frame23.map { Point($0.x + 5, $0.y) }
        memory.record(3, [code])
        memory.record(4, [moved])
        #expect(memory.recent(before: 6).map(\.polygon) == [moved.polygon])
    }

    /// A file's frame waits for the frames it uses to be recorded, whichever worker finishes first: the frame
    /// asking for frame 3's codes gets the code frame 1 read, though it asked before frame 1 was recorded.
    @Test func aFilesFrameSeesTheFramesItUses() async {
        let memory = KnownCodes(window: 2, inOrder: true)
        let asking = Task.detached { memory.recent(before: 3).map(\.data) }
        memory.record(0, [])
        memory.record(1, [Detection(type: "QR-Code", data: "late", quality: 1, polygon: Self.frame23)])
        #expect(await asking.value == ["late"])
        memory.end()
    }
}
