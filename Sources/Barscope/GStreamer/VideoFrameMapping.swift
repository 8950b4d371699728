import CBarscope
import CGStreamer
import CGStreamerVideo

/// Lends the luma plane of a sample's buffer, mapped read-only and unmapped when the closure returns.
///
/// Works for every 8-bit YUV layout whose first plane is luma (I420, YV12, NV12, NV21, Y42B, Y444, GRAY8, ...):
/// no conversion, the stride is passed to the scanner as it is.
/// - Returns: nil when the caps are not video or the format has no 8-bit luma plane.
public func withLumaPlane<R>(of sample: OpaquePointer, _ body: (LumaImage, _ ptsNs: UInt64?) -> R) -> R? {
    guard let buffer = gst_sample_get_buffer(sample), let caps = gst_sample_get_caps(sample) else { return nil }
    var info = GstVideoInfo()
    guard gst_video_info_from_caps(&info, caps) != 0 else { return nil }
    var frame = GstVideoFrame()
    guard gst_video_frame_map(&frame, &info, buffer, GST_MAP_READ) != 0 else { return nil }
    defer { gst_video_frame_unmap(&frame) }
    guard bs_format_has_luma_plane(bs_frame_format(&frame)) != 0, let data = bs_frame_plane_data(&frame, 0) else {
        return nil
    }
    let w = Int(bs_frame_width(&frame))
    let h = Int(bs_frame_height(&frame))
    let stride = Int(bs_frame_plane_stride(&frame, 0))
    guard w > 0, h > 0, stride >= w else { return nil }
    let pts = bs_buffer_pts(buffer)
    return body(
        LumaImage(base: UnsafeRawPointer(data), width: w, height: h, stride: stride), pts == .max ? nil : UInt64(pts))
}

/// Caps every scanner accepts without conversion (8-bit planar or semi-planar YUV, or grey).
let lumaCaps = "video/x-raw,format={GRAY8,I420,YV12,NV12,NV21,Y42B,Y444,Y41B,YUV9,YVU9}"
