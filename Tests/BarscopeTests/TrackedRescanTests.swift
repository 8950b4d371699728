import TestSupport
import Testing

@testable import Barscope

/// Tracked mode's sparse rescan of a tall 1D code reads at most `TrackedRegions.sparseLines` lines across it, yet
/// its box still spans every bar from end to end: the ends come from the image, not from the lines read.
@Suite(.suiteLimit) struct TrackedRescanTests {
    /// A CODE-128 label of 2-px modules with 420-px bars on white, lying along x, or turned by cairo to lie along y;
    /// with the bars' true outline.
    static func tallLabel(vertical: Bool) throws -> (picture: AccuracyTests.Picture, bars: PixelRect) {
        let short = try Code128.symbol("TALL-LABEL-42")
        let tall = BarcodeSymbol(
            type: short.type, text: short.text, modules: short.modules, quietZone: short.quietZone,
            barHeightModules: 210)
        let flat = AccuracyTests.Picture(tall, module: 2, margin: 30)
        let left = flat.pixels.firstIndex(of: 0)! % flat.width
        let right = flat.pixels.lastIndex(of: 0)! % flat.width + 1
        guard vertical else { return (flat, PixelRect(x: left, y: 30, width: right - left, height: 420)) }
        let (turned, corners) = flat.rotated(
            90, carrying: [Point(Double(left), 30), Point(Double(right), 450)])
        let xs = corners.map { Int($0.x.rounded()) }
        let ys = corners.map { Int($0.y.rounded()) }
        return (
            turned,
            PixelRect(x: xs.min()!, y: ys.min()!, width: xs.max()! - xs.min()!, height: ys.max()! - ys.min()!)
        )
    }

    @Test(arguments: [false, true]) func aTallCodeIsRescannedEndToEnd(vertical: Bool) throws {
        let (picture, bars) = try Self.tallLabel(vertical: vertical)
        let seen = TrackedCutTests.read(picture)
        #expect(seen.map(\.data) == ["TALL-LABEL-42"], "\(seen)")
        let code = try #require(seen.first)
        let known = Expected(detection: code, hasVelocity: true, framesSince: 1, speed: 2)
        // Read along the bars' normal only, at most `sparseLines` lines over a region more than 420 px long
        // (every 4th line would be over 105).
        let area = try #require(
            picture.with { TrackedRegions.regions(around: [known], mapping: CropMapping(region: nil), bounds: $0) }
                .first)
        let density = TrackedRegions.sparseDensity(for: code, over: area)
        let (step, otherWay, length) =
            vertical ? (density.columns, density.rows, area.width) : (density.rows, density.columns, area.height)
        #expect(
            otherWay == 0 && length > 420 && length / step <= TrackedRegions.sparseLines, "\(density) over \(area)")
        let again = picture.with {
            TrackedRegions.rescan(
                $0, around: [known], mapping: CropMapping(region: nil), viewfinder: nil, with: BarcodeReader())
        }
        #expect(again.map(\.data) == ["TALL-LABEL-42"], "\(again)")
        let box = try #require(again.first).bounds
        // Every bar, end to end, within 3 px (1.5 modules) of the true outline.
        for (got, want) in [
            (box.x, bars.x), (box.y, bars.y), (box.x + box.width, bars.x + bars.width),
            (box.y + box.height, bars.y + bars.height),
        ] {
            #expect(abs(got - want) <= 3, "box \(box), bars \(bars)")
        }
    }
}
