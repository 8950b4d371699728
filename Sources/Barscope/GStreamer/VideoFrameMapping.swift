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

/// Formats every scanner reads without conversion (8-bit planar or semi-planar YUV, or grey).
let lumaFormats = ["GRAY8", "I420", "YV12", "NV12", "NV21", "Y42B", "Y444", "Y41B", "YUV9", "YVU9"]
let lumaCaps = "video/x-raw,format={\(lumaFormats.joined(separator: ","))}"

/// Makes a converter in front of a scanner's appsink give it luma for the least work. Left to itself, videoconvert
/// fixates on the output format that loses least, Y444 from BGRx or RGB (three full planes, where the scanner reads
/// one); this sets the appsink's caps from each frame format that reaches the converter: a format with a luma plane
/// passes as it is, any other (RGB, packed YUV such as a camera's YUY2) becomes GRAY8, with the luma Y444 would have
/// had (GRAY8's own default is full range: the same pictures would read differently).
/// - Returns: the probe on the converter's sink pad, kept for as long as the converter runs.
func negotiateLuma(converter: UnsafeMutablePointer<GstElement>, sink: UnsafeMutablePointer<GstElement>) -> PadProbe? {
    let sinkRef = GstRef<GstElement>(retaining: sink)
    return PadProbe(on: converter, pad: "sink", mask: GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) { info in
        guard let event = bs_probe_event(info), bs_event_type(event) == GST_EVENT_CAPS else { return GST_PAD_PROBE_OK }
        var caps: UnsafeMutablePointer<GstCaps>? = nil
        gst_event_parse_caps(event, &caps)
        var video = GstVideoInfo()
        guard let caps, gst_video_info_from_caps(&video, caps) != 0,
            let name = gst_video_format_to_string(video.finfo.pointee.format).map({ String(cString: $0) })
        else { return GST_PAD_PROBE_OK }
        // Before the converter takes the event: it asks the appsink what it accepts as it handles these caps.
        setProperty(
            sinkRef.pointer, "caps",
            "video/x-raw,format=\(lumaFormats.contains(name) ? name : grayWithLuma(of: &video))")
        return GST_PAD_PROBE_OK
    }
}

/// GRAY8 with the colorimetry of the luma a YUV format would carry: a YUV frame's own (its luma is copied), an RGB
/// frame's GStreamer's default for YUV at its height (BT.709 above 576 lines, BT.601 up to it; limited range).
private func grayWithLuma(of video: inout GstVideoInfo) -> String {
    var colorimetry = video.height > 576 ? "bt709" : "bt601"
    if video.colorimetry.matrix != GST_VIDEO_COLOR_MATRIX_RGB,
        let own = gst_video_colorimetry_to_string(&video.colorimetry)
    {
        colorimetry = String(cString: own)
        g_free(own)
    }
    return "GRAY8,colorimetry=(string)\(colorimetry)"
}
