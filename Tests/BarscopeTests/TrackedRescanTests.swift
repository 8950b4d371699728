import Testing

@testable import Barscope

/// Tracked mode's sparse rescan of a tall 1D code reads at most `TrackedRegions.sparseLines` lines across it, yet
/// its box still spans every bar from end to end: the ends come from the image, not from the lines read.
@Suite struct TrackedRescanTests {
    /// A CODE-128 label of 2-px modules with 420-px bars on white, lying along x, or turned to lie along y.
    static func tallLabel(vertical: Bool) throws -> (picture: AccuracyTests.Picture, bars: PixelRect) {
        let short = try Code128.symbol("TALL-LABEL-42")
        let tall = BarcodeSymbol(
            type: short.type, text: short.text, modules: short.modules, quietZone: short.quietZone,
            barHeightModules: 210)
        let flat = AccuracyTests.Picture(tall, module: 2, margin: 30)
        let left = flat.pixels.firstIndex(of: 0)! % flat.width
        let right = flat.pixels.lastIndex(of: 0)! % flat.width
        let bars = PixelRect(x: left, y: 30, width: right - left + 1, height: 420)
        guard vertical else { return (flat, bars) }
        var turned = AccuracyTests.Picture(
            pixels: [UInt8](repeating: 255, count: flat.width * flat.height), width: flat.height, height: flat.width)
        for y in 0..<flat.height {
            for x in 0..<flat.width { turned.pixels[x * turned.width + y] = flat.pixels[y * flat.width + x] }
        }
        return (turned, PixelRect(x: bars.y, y: bars.x, width: bars.height, height: bars.width))
    }

    @Test(arguments: [false, true]) func aTallCodeIsRescannedEndToEnd(vertical: Bool) throws {
        let (picture, bars) = try Self.tallLabel(vertical: vertical)
        let seen = TrackedCutTests.read(picture)
        #expect(seen.map(\.data) == ["TALL-LABEL-42"], "\(seen)")
        let code = try #require(seen.first)
        let across = try #require(code.acrossBars)
        #expect(vertical ? abs(across.y) > 0.97 : abs(across.x) > 0.97)
        // The region is over 420 px along the bars: every 4th line would be over 105 lines; the cap reads 12.
        let again = picture.with {
            TrackedRegions.rescan(
                $0, around: [Expected(detection: code, hasVelocity: true, framesSince: 1, speed: 2)],
                mapping: CropMapping(region: nil), viewfinder: nil, with: BarcodeReader())
        }
        #expect(again.map(\.data) == ["TALL-LABEL-42"], "\(again)")
        let box = try #require(again.first).bounds
        // Every bar, end to end, within 3 px (1.5 modules), as the full read's box.
        for (got, want) in [
            (box.x, bars.x), (box.y, bars.y), (box.x + box.width, bars.x + bars.width),
            (box.y + box.height, bars.y + bars.height),
        ] {
            #expect(abs(got - want) <= 3, "box \(box), bars \(bars)")
        }
    }
}
