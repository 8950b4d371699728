import CBarscope
import CGStreamer
import CGStreamerApp
import CGStreamerVideo
import Foundation
import TestSupport
import Testing

@testable import Barscope

/// The demo source's I420 frames: drawn on a canvas kept from frame to frame and converted only where the scene
/// drew, each must still be the whole scene converted, pixel for pixel, and its luma GStreamer's.
@Suite(.suiteLimit) struct DemoFeederTests {
    /// One frame's planes: luma rows of `width` bytes, then Cb and Cr rows of half that, rounded up.
    struct Planes: Equatable {
        var y: [UInt8] = []
        var u: [UInt8] = []
        var v: [UInt8] = []
    }

    static func info(_ caps: String) -> GstVideoInfo {
        GStreamer.initialize()
        var info = GstVideoInfo()
        let made = gst_caps_from_string(caps)!
        defer { gst_caps_unref(made) }
        _ = gst_video_info_from_caps(&info, made)
        return info
    }

    /// The visible bytes of a mapped I420 frame's planes.
    static func planes(of frame: inout GstVideoFrame, width: Int, height: Int) -> Planes {
        var out = Planes()
        let cw = (width + 1) / 2
        for (p, w, h) in [(0, width, height), (1, cw, (height + 1) / 2), (2, cw, (height + 1) / 2)] {
            let base = bs_frame_plane_data(&frame, UInt32(p))!
            let stride = Int(bs_frame_plane_stride(&frame, UInt32(p)))
            var bytes: [UInt8] = []
            for row in 0..<h { bytes += UnsafeBufferPointer(start: base + row * stride, count: w) }
            switch p {
            case 0: out.y = bytes
            case 1: out.u = bytes
            default: out.v = bytes
            }
        }
        return out
    }

    /// Frame `n` drawn whole in BGRx and converted whole, into a buffer of the feeder's layout.
    static func reference(_ feeder: DemoFeeder, frame n: Int, info: inout GstVideoInfo) -> Planes {
        let (w, h) = (feeder.scene.size.width, feeder.scene.size.height)
        var bgrx = [UInt8](repeating: 0, count: w * 4 * h)
        bgrx.withUnsafeMutableBytes { feeder.scene.render(frame: n, into: $0.baseAddress!, stride: w * 4) }
        let buffer = gst_buffer_new_allocate(nil, UInt(feeder.frameBytes), nil)!
        defer { gst_buffer_unref(buffer) }
        var frame = GstVideoFrame()
        _ = gst_video_frame_map(&frame, &info, buffer, GST_MAP_WRITE)
        defer { gst_video_frame_unmap(&frame) }
        let planes = I420Planes(
            y: bs_frame_plane_data(&frame, 0)!, u: bs_frame_plane_data(&frame, 1)!, v: bs_frame_plane_data(&frame, 2)!,
            yStride: Int(bs_frame_plane_stride(&frame, 0)), uStride: Int(bs_frame_plane_stride(&frame, 1)),
            vStride: Int(bs_frame_plane_stride(&frame, 2)))
        bgrx.withUnsafeBufferPointer {
            I420Converter(height: h).convert(
                $0.baseAddress!, stride: w * 4, width: w, height: h, area: PixelRect(x: 0, y: 0, width: w, height: h),
                into: planes)
        }
        return Self.planes(of: &frame, width: w, height: h)
    }

    /// Every scene, at an even and an odd size, frame after frame (and one out of order): the feeder's frame equals
    /// the whole frame drawn and converted. An area the scene leaves out of `foregroundAreas` shows as the
    /// background where it drew, or as the last frame's drawing where it drew before.
    @Test(arguments: [DemoScene.Kind.codes, .conveyor, .small, .hard, .mix])
    func eachFrameIsTheWholeSceneConverted(kind: DemoScene.Kind) throws {
        for size in [Size(width: 640, height: 360), Size(width: 321, height: 243)] {
            var options = DemoOptions(size: size, frames: 0)
            options.scene = kind
            let feeder = DemoFeeder(options: options, format: .i420)
            var info = Self.info(feeder.caps)
            for n in Array(0..<14) + [40, 41] {
                let buffer = gst_buffer_new_allocate(nil, UInt(feeder.frameBytes), nil)!
                defer { gst_buffer_unref(buffer) }
                feeder.draw(frame: n, into: buffer)
                var frame = GstVideoFrame()
                #expect(gst_video_frame_map(&frame, &info, buffer, GST_MAP_READ) != 0)
                let got = Self.planes(of: &frame, width: size.width, height: size.height)
                gst_video_frame_unmap(&frame)
                let want = Self.reference(feeder, frame: n, info: &info)
                let wrong = zip(got.y, want.y).filter { $0 != $1 }.count
                let same = got == want  // (not the planes themselves in the message: a megabyte of numbers)
                #expect(same, "\(kind) \(size.width)x\(size.height) frame \(n): \(wrong) luma bytes differ")
            }
        }
    }

    /// The conversion's eight-pixel SIMD lanes give the scalar loop's bytes: random colours (BT.601 and BT.709, an
    /// odd width and height) converted whole against the same converted one 2x2 block at a time, which takes the
    /// scalar loop only.
    @Test(arguments: [(37, 11), (64, 720)])
    func theSIMDLanesAreTheScalarLoop(width: Int, height: Int) {
        let converter = I420Converter(height: height)
        // Fixed pseudo-random colours (a linear congruential sequence), the same on every run.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let bgrx = (0..<(width * 4 * height)).map { _ -> UInt8 in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        let (cw, ch) = ((width + 1) / 2, (height + 1) / 2)
        func converted(blockByBlock: Bool) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: width * height + 2 * cw * ch)
            out.withUnsafeMutableBufferPointer { o in
                let planes = I420Planes(
                    y: o.baseAddress!, u: o.baseAddress! + width * height, v: o.baseAddress! + width * height + cw * ch,
                    yStride: width, uStride: cw, vStride: cw)
                let areas =
                    blockByBlock
                    ? stride(from: 0, to: height, by: 2).flatMap { y in
                        stride(from: 0, to: width, by: 2).map { PixelRect(x: $0, y: y, width: 2, height: 2) }
                    } : [PixelRect(x: 0, y: 0, width: width, height: height)]
                for a in areas {
                    converter.convert(bgrx, stride: width * 4, width: width, height: height, area: a, into: planes)
                }
            }
            return out
        }
        let whole = converted(blockByBlock: false)
        let scalar = converted(blockByBlock: true)
        let differing = zip(whole, scalar).filter { $0 != $1 }.count
        #expect(differing == 0, "\(differing) of \(whole.count) bytes differ")
    }

    /// The luma of GStreamer's own BGRx-to-I420 conversion (videoconvert, on its test pattern's colours and
    /// ramps), within a level: BT.601 up to 576 lines, BT.709 above, as the caps say.
    @Test(arguments: [(320, 240), (1280, 720)])
    func theLumaIsGStreamers(width: Int, height: Int) throws {
        let converter = I420Converter(height: height)
        let p = try Pipeline(
            launch: "videotestsrc pattern=smpte num-buffers=1 ! video/x-raw,format=BGRx,width=\(width),height=\(height)"
                + " ! tee name=t t. ! queue ! appsink name=rgb sync=false t. ! queue ! videoconvert"
                + " ! video/x-raw,format=I420,colorimetry=\(converter.colorimetry) ! appsink name=yuv sync=false")
        defer { p.setState(GST_STATE_NULL) }
        p.setState(GST_STATE_PLAYING)
        let rgb = try #require(gst_app_sink_try_pull_sample(bs_app_sink(p.child("rgb")), 10_000_000_000))
        let yuv = try #require(gst_app_sink_try_pull_sample(bs_app_sink(p.child("yuv")), 10_000_000_000))
        defer {
            gst_sample_unref(rgb)
            gst_sample_unref(yuv)
        }
        var map = GstMapInfo()
        let rgbBuffer = try #require(gst_sample_get_buffer(rgb))
        #expect(gst_buffer_map(rgbBuffer, &map, GST_MAP_READ) != 0)
        defer { gst_buffer_unmap(rgbBuffer, &map) }
        var mine = [UInt8](repeating: 0, count: width * height)
        var u = [UInt8](repeating: 0, count: width * height / 4)
        var v = u
        mine.withUnsafeMutableBufferPointer { y in
            u.withUnsafeMutableBufferPointer { u in
                v.withUnsafeMutableBufferPointer { v in
                    converter.convert(
                        map.data, stride: width * 4, width: width, height: height,
                        area: PixelRect(x: 0, y: 0, width: width, height: height),
                        into: I420Planes(
                            y: y.baseAddress!, u: u.baseAddress!, v: v.baseAddress!, yStride: width,
                            uStride: width / 2, vStride: width / 2))
                }
            }
        }
        let theirs = withLumaPlane(of: yuv) { luma, _ -> [UInt8] in
            (0..<height).flatMap { row in
                Array(
                    UnsafeBufferPointer(
                        start: luma.base.assumingMemoryBound(to: UInt8.self) + row * luma.stride, count: width))
            }
        }
        let gst = try #require(theirs)
        let worst = zip(mine, gst).map { abs(Int($0) - Int($1)) }.max() ?? 99
        #expect(worst <= 1, "luma differs by up to \(worst) levels from videoconvert's")
        #expect(Set(mine).count > 8, "the pattern has many levels")
    }
}
