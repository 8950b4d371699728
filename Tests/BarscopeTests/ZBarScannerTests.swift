import Foundation
import TestSupport
import Testing

@testable import Barscope

@Suite(.suiteLimit)
struct ZBarScannerTests {
    /// A level EAN-13 of 3-px modules on a white label, only the modules in `shown` printed (the rest left blank).
    static func label(_ bars: [Bool], showing shown: Range<Int>) -> (pixels: [UInt8], width: Int, height: Int) {
        let (module, quiet, height) = (3, 40, 80)
        let width = bars.count * module + 2 * quiet
        var pixels = [UInt8](repeating: 235, count: width * height)
        for (m, dark) in bars.enumerated() where dark && shown.contains(m) {
            for y in 10..<height - 10 {
                for x in quiet + m * module..<quiet + (m + 1) * module { pixels[y * width + x] = 20 }
            }
        }
        return (pixels, width, height)
    }

    static func read(_ l: (pixels: [UInt8], width: Int, height: Int), with scanner: ZBarScanner) -> [String] {
        l.pixels.withUnsafeBytes { raw in
            scanner.scan(LumaImage(base: raw.baseAddress!, width: l.width, height: l.height, stride: l.width))
                .map(\.data)
        }
    }

    /// Each image is read on its own: ZBar's decoder keeps an EAN's half read in one scan for the next, so an image
    /// whose code is cut short (a third of its right half gone: the frame's edge, a finger) read as the whole code
    /// right after an image of all of it, on the same ZBar scanner, and as nothing on a fresh one. In video the
    /// image before is another frame (or, on a scanning worker, any frame it took before), so a read came from two
    /// frames, possibly of two codes, and a file scanned twice gave different reads.
    @Test func anEANHalfFromTheImageBeforeCompletesNothing() throws {
        let bars = try EAN13.symbol("7648003861711").modules[0]
        let whole = Self.label(bars, showing: 0..<bars.count)
        let cut = Self.label(bars, showing: 0..<75)
        #expect(Self.read(cut, with: ZBarScanner()) == [])
        let scanner = ZBarScanner()
        for _ in 0..<3 {
            #expect(Self.read(whole, with: scanner) == ["7648003861711"])
            #expect(Self.read(cut, with: scanner) == [], "the image before's half completed the cut code")
        }
    }

    static func read(_ text: String, x: Double, width: Double = 400, type: String = "EAN-13") -> Detection {
        Detection(
            type: type, data: text, quality: 10,
            polygon: [Point(x, 50), Point(x, 220), Point(x + width, 220), Point(x + width, 50)])
    }

    /// Two EAN-13 side by side (as on a low-bitrate 1080p clip of the kit's): ZBar's lines across both joined the
    /// right one's left half to the left one's right half, and the other way round, two numbers whose check digits
    /// passed. Each join is dropped, the two codes kept, whichever joins came with them; codes that merely share a
    /// half are kept.
    @Test func aNumberMadeOfTwoCodesHalvesIsDropped() {
        let a = Self.read("0811159134986", x: 120)
        let b = Self.read("7357650202814", x: 720)
        let bThenA = Self.read("7357650134986", x: 125, width: 836)  // b's left half, a's right half
        let aThenB = Self.read("0811159202814", x: 122, width: 1032)  // a's left half, b's right half
        let kept = { (reads: [Detection]) in ZBarScanner.withoutJoinedHalves(reads).map(\.data) }
        #expect(kept([a, b, bThenA]) == [a.data, b.data])
        #expect(kept([bThenA, a, b, aThenB]) == [a.data, b.data])
        // Over the same code, the join's box lies on one of them: it is still made of two codes read apart.
        #expect(kept([a, b, Self.read("7357650134986", x: 719)]) == [a.data, b.data])
        // UPC-A given as 12 digits is an EAN-13 with a leading 0.
        #expect(kept([Self.read("811159134986", x: 120, type: "UPC-A"), b, bThenA]) == ["811159134986", b.data])
        // Two codes of one maker share a left half; a third read sharing their halves, where they are, is not
        // made of them.
        let c = Self.read("4006381333931", x: 0)
        let d = Self.read("4006381000015", x: 600)
        #expect(kept([c, d]) == [c.data, d.data])
        let e = Self.read("4006381333931", x: 0)
        #expect(kept([e, d, Self.read("1234567890128", x: 300)]).count == 3)
    }

    /// A tilted I2/5 read whole (quality 90) and, on one line leaving it through its bars' ends, as a shorter code
    /// (quality 1), in one image: the part is dropped; the same digits elsewhere, or in another symbology, are a
    /// code of their own.
    @Test func aPartOfACodeReadWholeInTheSameImageIsDropped() {
        let whole = Self.read("7423321081", x: 446, width: 497, type: "I2/5")
        let part = Self.read("742332", x: 460, width: 310, type: "I2/5")
        let kept = { (reads: [Detection]) in ZBarScanner.withoutParts(reads).map(\.data) }
        #expect(kept([part, whole]) == [whole.data])
        #expect(kept([part]) == [part.data])
        #expect(kept([Self.read("742332", x: 1200, type: "I2/5"), whole]).count == 2)
        #expect(kept([Self.read("742332", x: 460, type: "CODE-128"), whole]).count == 2)
    }

    /// A line that left a tilted I2/5 through its bars' ends and read its last characters from the background 600 px
    /// on (the kit's seed 3131, q-1080-mp4-hard, frame 21 in the 4:3 viewfinder: boxed 945 px long) decodes a
    /// longer run than the lines that crossed the code: the runs as long as the shorter median are the read's lines,
    /// and the stray line's hit, far outside it, is no end of the code; hits on lines farther away may lie as far
    /// outside as a code tilted 45 degrees puts its ends. Where the decoder places no line, the runs of bars walked
    /// through the hits stand in, and without those the hits' own extent.
    @Test func aLineThatReadOnPastTheCodeIsNoLineOfIt() {
        let hits = [Point(1521, 658), Point(580, 659), Point(916, 660), Point(580, 661), Point(915, 662)]
        let runs: [Point: (Point, Point)] = [
            Point(1521, 658): (Point(580.1, 658), Point(1521.3, 658)),
            Point(580, 659): (Point(580.1, 659), Point(915.2, 659)),
            Point(916, 660): (Point(915.9, 660), Point(580.3, 660)),
        ]
        let read = ZBarScanner.readLines(hits: hits, axis: Point(1, 0)) {
            runs[$0]
        } walked: { _ in
            nil
        }
        #expect(read.exact)
        #expect(read.lines.count == 2)
        #expect(read.lines.allSatisfy { abs($0.0.distance(to: $0.1) - 335.5) < 0.5 && $0.0.x < $0.1.x })
        let kept = ZBarScanner.hits(hits, within: read.lines[0], alongX: true, slack: 5.6)
        #expect(kept == Array(hits.dropFirst()))
        #expect(ZBarScanner.hits([Point(640, 759)], within: read.lines[0], alongX: true, slack: 5.6).count == 1)
        // Undecoded: the hits' extent (of those that can be the code's: here not the one far off), or for hits
        // piled within a few pixels, the run walked through them.
        let bare = ZBarScanner.readLines(hits: hits, axis: Point(1, 0), onCode: { $0.x < 1500 }) { _ in
            nil
        } walked: { _ in
            nil
        }
        #expect(!bare.exact && bare.lines.count == 1 && bare.lines[0].0.x == 580 && bare.lines[0].1.x == 916)
        let piled = [Point(580, 659), Point(583, 661)]
        let walked = ZBarScanner.readLines(hits: piled, axis: Point(1, 0)) { _ in
            nil
        } walked: {
            $0 == Point(580, 659) ? (Point(570, 659), Point(920, 659), false) : nil
        }
        #expect(!walked.exact && walked.lines.count == 1 && walked.lines[0].0 == Point(570, 659))
    }

}
