import Foundation
import TestSupport
import Testing

@testable import Barscope

/// QR structured append: one message split over several codes (libqrencode makes them). Each part comes out as a
/// QR-Code with its index, the count and the parity, whichever engine reads it, alone or beside the others; the
/// parts of a message join into its text.
@Suite(.suiteLimit) struct StructuredAppendTests {
    static let message =
        "Barscope structured append: one message in four QR codes of version 2, part by part. 42"
    /// The parity ISO/IEC 18004 puts in every part's header: the XOR of the whole message's bytes.
    static let parity = String(message.utf8.reduce(0, ^))

    static func parts() throws -> [BarcodeSymbol] { try QRCode.structuredAppend(message, version: 2) }

    /// Pictures side by side, `gap` white pixels between them, on one canvas as tall as the tallest.
    static func sideBySide(_ pictures: [AccuracyTests.Picture], gap: Int = 16) -> AccuracyTests.Picture {
        let width = pictures.map(\.width).reduce(0, +) + gap * (pictures.count - 1)
        let height = pictures.map(\.height).max() ?? 0
        var pixels = [UInt8](repeating: 255, count: width * height)
        var left = 0
        for p in pictures {
            for y in 0..<p.height {
                for x in 0..<p.width { pixels[y * width + left + x] = p.pixels[y * p.width + x] }
            }
            left += p.width + gap
        }
        return AccuracyTests.Picture(pixels: pixels, width: width, height: height)
    }

    @Test func libqrencodeSplitsTheMessageIntoFour() throws {
        #expect(try Self.parts().count == 4)
    }

    @Test(arguments: [Engine.zbar, .zxing, .both])
    func eachPartAloneIsAQRCodeWithItsPlace(engine: Engine) throws {
        var texts: [String] = []
        for (i, symbol) in try Self.parts().enumerated() {
            let reader = BarcodeReader(engine: engine, thorough: true)
            let found = AccuracyTests.Picture(symbol, module: 4).with { reader.read($0) }
            #expect(found.count == 1, "\(engine) part \(i): \(found)")
            let d = try #require(found.first)
            #expect(d.type == "QR-Code", "\(engine) part \(i): \(d.type)")
            #expect(d.sequence == StructuredAppend(index: i, count: 4, id: Self.parity), "\(engine) part \(i)")
            #expect(!d.data.contains("\0"))
            texts.append(d.data)
        }
        #expect(texts.joined() == Self.message, "\(engine): \(texts)")
    }

    @Test(arguments: [Engine.zbar, .zxing, .both])
    func allPartsInOnePictureComeOutAsPartsAndJoin(engine: Engine) throws {
        let picture = Self.sideBySide(try Self.parts().map { AccuracyTests.Picture($0, module: 4) })
        let found = picture.with { BarcodeReader(engine: engine, thorough: true).read($0) }
        #expect(found.map(\.type) == Array(repeating: "QR-Code", count: 4), "\(engine): \(found.map(\.type))")
        #expect(
            Set(found.compactMap(\.sequence))
                == Set((0..<4).map { StructuredAppend(index: $0, count: 4, id: Self.parity) }),
            "\(engine): \(found.map { $0.sequence as Any })")
        // Left to right, as drawn: each part where it was drawn.
        #expect(found.sorted { $0.center.x < $1.center.x }.compactMap(\.sequence?.index) == [0, 1, 2, 3])
        let joined = StructuredAppend.join(found)
        #expect(joined.map(\.data) == [Self.message])
        #expect(joined.first?.sequence == StructuredAppend(index: nil, count: 4, id: Self.parity))
        #expect(joined.first?.type == "QR-Code")
    }

    @Test(arguments: [[1, 3], [0, 2], [2, 3], [0, 3]])
    func somePartsInOnePictureKeepTheirOwnTexts(present: [Int]) throws {
        // ZBar puts what it found of a message in one partial container (NULs at the gaps) whose parts' own lengths
        // are off by one: each part's text must be cut from it exactly, and zxing-cpp gives each its header.
        let parts = try Self.parts()
        let alone = try parts.map { s in
            try #require(
                AccuracyTests.Picture(s, module: 4).with { BarcodeReader(engine: .zxing).read($0) }.first?.data)
        }
        #expect(alone.joined() == Self.message)
        let picture = Self.sideBySide(present.map { AccuracyTests.Picture(parts[$0], module: 4) })
        for engine in [Engine.zbar, .both] {
            let found = picture.with { BarcodeReader(engine: engine, thorough: true).read($0) }
                .sorted { $0.center.x < $1.center.x }
            #expect(found.map(\.type) == ["QR-Code", "QR-Code"], "\(engine) \(present)")
            #expect(found.map(\.data) == present.map { alone[$0] }, "\(engine) \(present)")
            #expect(
                found.map(\.sequence) == present.map { StructuredAppend(index: $0, count: 4, id: Self.parity) },
                "\(engine) \(present)")
            #expect(StructuredAppend.join(found).isEmpty)
        }
    }

    @Test func zbarsContainerIsCutIntoItsParts() {
        // As ZBar 0.23 lays out parts 1 and 3 of 4: NUL (gap 0), "bb", NUL (gap 2), "dd"; the offsets it gives:
        // the placeholder 0, part 1 at 0 (the gap's NUL), the placeholder at 3, part 3 at 0 again.
        let whole: [UInt8] = [0] + Array("bb".utf8) + [0] + Array("dd".utf8)
        let texts = ZBarScanner.partTexts(whole, [(true, 0), (false, 0), (true, 3), (false, 0)])
        #expect(texts.map { String(decoding: $0, as: UTF8.self) } == ["bb", "dd"])
        // Every part there: no NULs, each part's offset where its text starts.
        let complete = ZBarScanner.partTexts(Array("aabbbc".utf8), [(false, 0), (false, 2), (false, 5)])
        #expect(complete.map { String(decoding: $0, as: UTF8.self) } == ["aa", "bbb", "c"])
        // The first two of four: the placeholder at the end left no NUL.
        let head = ZBarScanner.partTexts(Array("aabb".utf8), [(false, 0), (false, 2), (true, 4)])
        #expect(head.map { String(decoding: $0, as: UTF8.self) } == ["aa", "bb"])
    }

    @Test func partsJoinOnlyWhenEveryOneIsThereOnceOver() {
        func part(_ i: Int, _ text: String, id: String? = "7", count: Int = 3) -> Detection {
            var d = Detection(type: "QR-Code", data: text, quality: 1, polygon: [Point(0, 0)])
            d.sequence = StructuredAppend(index: i, count: count, id: id)
            return d
        }
        #expect(StructuredAppend.join([part(2, "c"), part(0, "a"), part(1, "b")]).map(\.data) == ["abc"])
        // The same part twice (two images, two engines) counts once.
        #expect(StructuredAppend.join([part(0, "a"), part(1, "b"), part(1, "b"), part(2, "c")]).map(\.data) == ["abc"])
        // A part missing, another message's part (other parity), two texts for one index: nothing joined.
        #expect(StructuredAppend.join([part(0, "a"), part(2, "c")]).isEmpty)
        #expect(StructuredAppend.join([part(0, "a"), part(1, "b", id: "8"), part(2, "c")]).isEmpty)
        #expect(StructuredAppend.join([part(0, "a"), part(1, "b"), part(1, "B"), part(2, "c")]).isEmpty)
        // Two messages at once, each joined.
        let two = StructuredAppend.join([
            part(0, "x", id: "1", count: 2), part(0, "a"), part(1, "y", id: "1", count: 2), part(1, "b"), part(2, "c"),
        ])
        #expect(two.map(\.data) == ["xy", "abc"])
        #expect(StructuredAppend.join([Detection(type: "QR-Code", data: "alone", quality: 1, polygon: [])]).isEmpty)
    }

    @Test func theEventCarriesTheSequence() throws {
        let symbol = try Self.parts()[0]
        let d = try #require(
            AccuracyTests.Picture(symbol, module: 4).with { BarcodeReader(engine: .both).read($0) }.first)
        let line = Event.detection(frame: 0, ptsNs: 0, detection: d, track: nil).jsonLine
        #expect(line.contains("\"type\":\"QR-Code\""), "\(line)")
        #expect(line.contains("\"sequence\":{\"index\":0,\"count\":4,\"id\":\"\(Self.parity)\"}"), "\(line)")
        let alone = try #require(
            AccuracyTests.Picture(try QRCode.symbol("alone"), module: 4).with { BarcodeReader(engine: .both).read($0) }
                .first)
        #expect(!Event.detection(frame: 0, ptsNs: 0, detection: alone, track: nil).jsonLine.contains("sequence"))
        let reads = try Self.parts().map { s in
            AccuracyTests.Picture(s, module: 4).with { BarcodeReader(engine: .both).read($0) }
        }
        let joined = try #require(StructuredAppend.join(reads.flatMap { $0 }).first)
        let joinedLine = Event.detection(frame: 0, ptsNs: 0, detection: joined, track: nil).jsonLine
        #expect(
            joinedLine.contains("\"sequence\":{\"count\":4,\"id\":\"\(Self.parity)\",\"joined\":true}"), "\(joinedLine)"
        )
    }
}
