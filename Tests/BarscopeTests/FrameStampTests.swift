import CGStreamer
import Testing

@testable import Barscope

/// The viewfinder stamp a frame's buffer carries (`RegionTimeline.Stamp.attach`): the crop and the scanner read it
/// back exactly, the whole frame included, and a stamp set again replaces the first.
struct FrameStampTests {
    @Test func aStampReadsBackAsAttached() throws {
        GStreamer.initialize()
        let buffer = try #require(gst_buffer_new())
        defer { gst_buffer_unref(buffer) }
        #expect(RegionTimeline.Stamp(buffer: buffer) == nil)
        let frame = Size(width: 3840, height: 2160)
        let region = PixelRect(x: 372, y: 2, width: 3096, height: 2156)
        RegionTimeline.Stamp(frame: frame, region: region).attach(to: buffer)
        let back = try #require(RegionTimeline.Stamp(buffer: buffer))
        #expect(back.frame == frame && back.region == region && back.scanArea != nil)
        // Set again (a buffer stamped twice keeps one meta): the whole frame, no region.
        RegionTimeline.Stamp(frame: Size(width: 640, height: 360), region: nil).attach(to: buffer)
        let whole = try #require(RegionTimeline.Stamp(buffer: buffer))
        #expect(whole.frame == Size(width: 640, height: 360) && whole.region == nil && whole.scanArea == nil)
        RegionTimeline.Stamp().attach(to: buffer)
        let empty = try #require(RegionTimeline.Stamp(buffer: buffer))
        #expect(empty.frame == nil && empty.region == nil)
    }
}
