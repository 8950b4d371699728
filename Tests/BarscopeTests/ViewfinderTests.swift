import Barscope
import TestSupport
import Testing

/// Scanbot's view finder semantics in frame pixels: largest rectangle of the aspect ratio inside the frame less
/// the minimum insets, centred; a preferred height kept when it fits.
@Suite(.suiteLimit) struct ViewfinderTests {
    @Test func defaultIsLargestCentred4by3InsideTwentyPixelInsets() throws {
        let r = try #require(Viewfinder().region(in: Size(width: 1920, height: 1080)))
        // 1040 high (1080 - 2×20), 1386.67 wide, centred: x = 266.67 → even edges 268...1652.
        #expect(r == PixelRect(x: 268, y: 20, width: 1384, height: 1040))
        #expect(abs(Double(r.width) / Double(r.height) - 4.0 / 3.0) < 0.01)
    }

    @Test func widthLimitedWhenTheFrameIsTall() throws {
        let r = try #require(Viewfinder().region(in: Size(width: 480, height: 800)))
        // 440 wide available → 330 high, centred vertically: y = 20 + (760 - 330)/2 = 235.
        #expect(r.x == 20 && r.width == 440)
        #expect(abs(r.y - 235) <= 1 && abs(r.height - 330) <= 2)
    }

    @Test func preferredHeightIsKeptWhenItFitsAndIgnoredWhenNot() throws {
        var v = Viewfinder()
        v.preferredHeight = 300
        let r = try #require(v.region(in: Size(width: 1280, height: 720)))
        #expect(r.height == 300 && r.width == 400)
        #expect(r.x == 440 && r.y == 210)
        v.preferredHeight = 5000
        #expect(v.region(in: Size(width: 1280, height: 720)) == Viewfinder().region(in: Size(width: 1280, height: 720)))
    }

    @Test func unevenInsetsShiftTheRegion() throws {
        var v = Viewfinder()
        v.minimumInset = EdgeInsets(top: 100, left: 0, bottom: 20, right: 0)
        let r = try #require(v.region(in: Size(width: 1280, height: 720)))
        #expect(r.y == 100 && r.maxY == 700)
    }

    @Test func oddFrameSizesGiveEvenEdgesInsideTheFrame() throws {
        for size in [Size(width: 641, height: 481), Size(width: 333, height: 177), Size(width: 1919, height: 1079)] {
            let r = try #require(Viewfinder().region(in: size))
            #expect(r.x % 2 == 0 && r.y % 2 == 0 && r.width % 2 == 0 && r.height % 2 == 0)
            #expect(r.x >= 20 && r.y >= 20 && r.maxX <= size.width - 20 && r.maxY <= size.height - 20)
            #expect(abs(Double(r.width) / Double(r.height) - 4.0 / 3.0) < 0.03, "\(size): \(r)")
        }
    }

    @Test func nothingFitsInATinyFrameAndOffMeansNoRegion() {
        #expect(Viewfinder().region(in: Size(width: 40, height: 40)) == nil)
        #expect(Viewfinder.off.region(in: Size(width: 1280, height: 720)) == nil)
    }

    @Test func normalizedRegionIsFractionsOfTheFrame() throws {
        let n = try #require(NormalizedRegion(x: 0.25, y: 0.25, width: 0.5, height: 0.5))
        let r = try #require(Viewfinder(normalizedRegion: n).region(in: Size(width: 1280, height: 720)))
        #expect(r == PixelRect(x: 320, y: 180, width: 640, height: 360))
        #expect(NormalizedRegion(x: 0.8, y: 0, width: 0.5, height: 1) == nil)
    }

    @Test func aspectRatioParsing() {
        #expect(AspectRatio(parsing: "16:9") == AspectRatio(16, 9))
        #expect(AspectRatio(parsing: "0:3") == nil)
        #expect(AspectRatio(parsing: "4-3") == nil)
        #expect(AspectRatio(parsing: "-4:3") == nil)
    }

    @Test func cropMappingAddsTheRegionOrigin() {
        let m = CropMapping(region: PixelRect(x: 268, y: 20, width: 1384, height: 1040))
        #expect(m.toFrame(Point(10, 5)) == Point(278, 25))
        #expect(CropMapping(region: nil).toFrame(Point(10, 5)) == Point(10, 5))
    }

    @Test func secondaryRegionSitsInsideThePrimary() throws {
        var v = Viewfinder()
        v.secondaryAspectRatio = AspectRatio(3, 1)
        let primary = try #require(v.region(in: Size(width: 1280, height: 720)))
        let inner = try #require(v.secondaryRegion(inside: primary))
        // 906 wide less 2 × 10 → 886 wide, 295.3 high, centred in the primary.
        #expect(inner.x == primary.x + 10 && inner.maxX == primary.maxX - 10)
        #expect(abs(Double(inner.width) / Double(inner.height) - 3) < 0.03)
        #expect(abs((inner.y + inner.height / 2) - (primary.y + primary.height / 2)) <= 1)
        #expect(Viewfinder().secondaryRegion(inside: primary) == nil)
    }
}
