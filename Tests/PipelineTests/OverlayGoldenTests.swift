import Barscope
import CCairo
import Foundation
import TestSupport
import Testing

/// The overlay drawn with known detections onto a known frame, compared with a golden PNG committed in the repo
/// (per-pixel tolerance for font rasterisation), plus pixel values at chosen points. Regenerate on purpose with
/// `BARSCOPE_REGENERATE_GOLDENS=1 swift test --filter OverlayGoldenTests`: that run writes the golden and fails (a
/// rewritten golden checks nothing), and the comparison reports itself skipped; review the picture, commit it, and
/// run again without the variable.
@Suite(.serialized, .suiteLimit) struct OverlayGoldenTests {
    static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Goldens/overlay-640x360.png")
    static var regenerating: Bool { ProcessInfo.processInfo.environment["BARSCOPE_REGENERATE_GOLDENS"] != nil }

    /// A mid-grey frame, the default viewfinder, a QR-like square and a tilted 1D code.
    static func render() -> OpaquePointer {
        let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 640, 360)!
        let cr = cairo_create(surface)!
        defer { cairo_destroy(cr) }
        cairo_set_source_rgb(cr, 0.5, 0.5, 0.5)
        cairo_paint(cr)
        let qr = Detection(
            type: "QR-Code", data: "golden", quality: 1,
            polygon: [Point(300, 100), Point(300, 180), Point(380, 180), Point(380, 100)])
        let bar = Detection(
            type: "EAN-13", data: "4006381333931", quality: 40,
            polygon: [Point(150, 220), Point(160, 280), Point(330, 252), Point(320, 192)])
        var vf = Viewfinder()
        vf.secondaryAspectRatio = AspectRatio(3, 1)
        let region = vf.region(in: Size(width: 640, height: 360))!
        var style = OverlayStyle()
        style.labelSize = 14
        OverlayRenderer(style: style).draw(
            on: cr, frame: Size(width: 640, height: 360), viewfinder: region,
            secondary: vf.secondaryRegion(inside: region), detections: [qr, bar], status: "golden status")
        cairo_surface_flush(surface)
        return surface
    }

    static func pixel(_ s: OpaquePointer, _ x: Int, _ y: Int) -> [Int] {
        let data = cairo_image_surface_get_data(s)!
        let stride = Int(cairo_image_surface_get_stride(s))
        let p = data + y * stride + x * 4
        return [Int(p[2]), Int(p[1]), Int(p[0])]
    }

    @Test(.disabled(if: regenerating, "BARSCOPE_REGENERATE_GOLDENS is set: the golden is rewritten, not checked"))
    func matchesTheGoldenPicture() throws {
        let drawn = Self.render()
        defer { cairo_surface_destroy(drawn) }
        let golden = try #require(cairo_image_surface_create_from_png(Self.golden.path))
        defer { cairo_surface_destroy(golden) }
        #expect(cairo_surface_status(golden) == CAIRO_STATUS_SUCCESS, "missing golden: \(Self.golden.path)")
        var differing = 0
        for y in 0..<360 {
            for x in 0..<640
            where zip(Self.pixel(drawn, x, y), Self.pixel(golden, x, y)).contains(where: { abs($0 - $1) > 24 }) {
                differing += 1
            }
        }
        // Text may rasterise a little differently with another font version; shapes may not move.
        #expect(differing <= 640 * 360 / 200, "\(differing) pixels differ from the golden")
    }

    /// Writes the golden from what is drawn now, only when asked to, and always fails: the picture must be looked
    /// at before it is committed, and a run that rewrote it has compared nothing.
    @Test(.enabled(if: regenerating, "set BARSCOPE_REGENERATE_GOLDENS=1 to rewrite the golden picture"))
    func regenerateTheGolden() {
        let drawn = Self.render()
        defer { cairo_surface_destroy(drawn) }
        #expect(cairo_surface_write_to_png(drawn, Self.golden.path) == CAIRO_STATUS_SUCCESS)
        Issue.record(
            "wrote \(Self.golden.path): review it, commit it, and run again without BARSCOPE_REGENERATE_GOLDENS")
    }

    @Test func pixelsWhereTheyBelong() {
        let drawn = Self.render()
        defer { cairo_surface_destroy(drawn) }
        let region = Viewfinder().region(in: Size(width: 640, height: 360))!
        // Outside the region: grey 128 under the 0.66 black mask → 128 × 0.34 ≈ 44.
        #expect(Self.pixel(drawn, 5, 200).allSatisfy { abs($0 - 44) <= 3 }, "\(Self.pixel(drawn, 5, 200))")
        // Inside, away from everything: untouched grey.
        #expect(Self.pixel(drawn, region.x + 12, region.maxY - 12) == [128, 128, 128])
        // The outline: opaque white on the region's edge, midway along it.
        #expect(Self.pixel(drawn, region.x, (region.y + region.maxY) / 2) == [255, 255, 255])
        // Inside the QR polygon, the 0.25 blue fill: blue up, red and green down.
        let inside = Self.pixel(drawn, 340, 140)
        #expect(inside[2] > 150 && inside[0] < 110 && inside[1] < 110, "\(inside)")
    }
}
