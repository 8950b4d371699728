// The `barscope` GStreamer element: a drop-in, better replacement for gst-plugins-bad's `zbar` element.
//
//   GST_PLUGIN_PATH=$(scripts/barscope element-path) gst-launch-1.0 -m \
//       filesrc location=clip.mp4 ! decodebin ! videoconvert ! barscope viewfinder=4:3 ! fakesink
//   ... ! videoconvert ! video/x-raw,format=BGRx ! barscope draw=true ! videoconvert ! autovideosink
//
// It scans each frame in place (the luma plane of GRAY8/I420/YV12/NV12/NV21/Y41B/Y42B/YUV9/YVU9 directly, BGRx/BGRA
// through a grey copy of the region only), inside an optional viewfinder, and with draw=true draws the viewfinder,
// each code's box, corner polygon and label on BGRx/BGRA frames.
//
// Properties: message (TRUE), attach-frame (FALSE), cache (FALSE) as the stock element; draw (FALSE);
// viewfinder ("off" or W:H), insets ("20" or "top,left,bottom,right"), region (normalised "x,y,w,h", replaces
// viewfinder and insets), symbologies (zbarimg -S values: "disable qrcode.enable").
//
// Messages: one element message per code, named "barcode", with the stock element's fields, names and types:
//   timestamp (guint64)     the buffer's pts
//   stream-time (guint64)   running-time (guint64)   from the segment
//   type (string)           ZBar's symbology name: "QR-Code", "EAN-13", "CODE-128", "I2/5", ...
//   symbol (string)         the decoded text
//   quality (int)           ZBar's quality
//   duration (guint64)      only when the buffer has one
//   frame (GstSample)       only with attach-frame=true
// plus, in full-frame pixels whatever the viewfinder:
//   polygon (GstValueArray of <x, y>)   the corners (1D codes: the tight box around ZBar's scan-line hits)
//   bounds (GstValueArray <x, y, width, height>)
// An application written for the stock element works unchanged.
import Barscope
import CBarscope
import CBarscopePlugin
import CCairo
import CGStreamer
import CGStreamerVideo

/// Per-element state. Used only from the element's streaming thread (transform_frame_ip calls are serialized),
/// created and freed by the GObject.
final class ElementState {
    var scanner = ZBarScanner()
    var symbologies: String? = nil
    var viewfinderKey: [String?] = []
    var viewfinder = Viewfinder.off
    let tracker = Tracker(lostAfterFrames: 5)
    var frameNumber = 0
    var grey: [UInt8] = []
    var renderer = OverlayRenderer()

    func configure(_ s: BarscopeSettings) {
        let symbologiesText = s.symbologies.map { String(cString: $0) }
        if symbologiesText != symbologies {
            symbologies = symbologiesText
            let values = (symbologiesText ?? "").split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
            // Validated when set; a value that slipped through is simply skipped.
            var settings = ScannerSettings()
            for v in values { try? settings.add(v) }
            scanner = ZBarScanner(settings: settings)
        }
        let key = [s.viewfinder, s.insets, s.region].map { $0.map { String(cString: $0) } }
        if key != viewfinderKey {
            viewfinderKey = key
            viewfinder = (try? Viewfinder.parse(aspect: key[0] ?? "off", insets: key[1] ?? "20", region: key[2])) ?? .off
        }
    }

    func process(_ filter: UnsafeMutablePointer<GstVideoFilter>, _ frame: UnsafeMutablePointer<GstVideoFrame>,
        _ s: BarscopeSettings) -> Bool
    {
        configure(s)
        let width = Int(bs_frame_width(frame)), height = Int(bs_frame_height(frame))
        guard width > 0, height > 0, let plane = bs_frame_plane_data(frame, 0) else { return false }
        let stride = Int(bs_frame_plane_stride(frame, 0))
        let format = bs_frame_format(frame)
        let size = Size(width: width, height: height)
        let region = viewfinder.region(in: size)
        let area = region ?? PixelRect(x: 0, y: 0, width: width, height: height)
        let mapping = CropMapping(offsetX: area.x, offsetY: area.y)

        var detections: [Detection]
        let isRGB = format == GST_VIDEO_FORMAT_BGRx || format == GST_VIDEO_FORMAT_BGRA
        if isRGB {
            detections = scanBGR(plane, stride: stride, area: area, mapping: mapping, region: region)
        } else if bs_format_has_luma_plane(format) != 0 {
            // The region of the luma plane, in place: same stride, base moved to its top-left pixel.
            let base = UnsafeRawPointer(plane) + area.y * stride + area.x
            let luma = LumaImage(base: base, width: area.width, height: area.height, stride: stride)
            detections = scanner.scan(luma, mapping: mapping, viewfinder: region)
        } else {
            return false
        }

        let (ids, events) = tracker.update(frame: frameNumber, ptsNs: nil, detections: detections)
        frameNumber += 1
        if s.message != 0 {
            var report = Array(zip(detections, ids))
            if s.cache != 0 {
                // Like the stock element's cache: a code is reported when it appears, not on every frame.
                let fresh = Set(events.compactMap { e -> Int? in
                    if case .appeared(_, _, _, let id) = e { return id }
                    return nil
                })
                report = report.filter { fresh.contains($0.1) }
            }
            for (d, _) in report { post(d, filter: filter, frame: frame, attachFrame: s.attach_frame != 0) }
        }
        if s.draw != 0 && isRGB {
            let surface = cairo_image_surface_create_for_data(
                plane, format == GST_VIDEO_FORMAT_BGRA ? CAIRO_FORMAT_ARGB32 : CAIRO_FORMAT_RGB24, Int32(width),
                Int32(height), Int32(stride))
            defer { cairo_surface_destroy(surface) }
            if let cr = cairo_create(surface) {
                defer { cairo_destroy(cr) }
                renderer.draw(on: cr, frame: size, viewfinder: region, detections: detections)
            }
            cairo_surface_flush(surface)
        }
        return true
    }

    /// BGRx/BGRA: only the region is turned to grey (BT.601 weights), into a buffer reused across frames.
    private func scanBGR(
        _ plane: UnsafeMutablePointer<UInt8>, stride: Int, area: PixelRect, mapping: CropMapping, region: PixelRect?
    ) -> [Detection] {
        let count = area.width * area.height
        if grey.count != count { grey = [UInt8](repeating: 0, count: count) }
        grey.withUnsafeMutableBufferPointer { out in
            for y in 0..<area.height {
                let row = plane + (area.y + y) * stride + area.x * 4
                let o = y * area.width
                for x in 0..<area.width {
                    let p = row + x * 4
                    let b: Int = 29 * Int(p[0])
                    let g: Int = 150 * Int(p[1])
                    let r: Int = 77 * Int(p[2])
                    out[o + x] = UInt8(truncatingIfNeeded: (b + g + r) >> 8)
                }
            }
        }
        return grey.withUnsafeBytes { buf in
            scanner.scan(
                LumaImage(base: buf.baseAddress!, width: area.width, height: area.height, stride: area.width),
                mapping: mapping, viewfinder: region)
        }
    }

    private func post(
        _ d: Detection, filter: UnsafeMutablePointer<GstVideoFilter>, frame: UnsafeMutablePointer<GstVideoFrame>,
        attachFrame: Bool
    ) {
        var xy: [Int32] = []
        for p in d.polygon { xy += [Int32(p.x.rounded()), Int32(p.y.rounded())] }
        var bounds: [Int32] = [Int32(d.bounds.x), Int32(d.bounds.y), Int32(d.bounds.width), Int32(d.bounds.height)]
        barscope_post_barcode(
            filter, frame, d.type, d.data, Int32(d.quality), &xy, UInt32(d.polygon.count), &bounds,
            attachFrame ? 1 : 0)
    }
}

@_cdecl("barscope_swift_new")
public func barscopeSwiftNew() -> UnsafeMutableRawPointer {
    Unmanaged.passRetained(ElementState()).toOpaque()
}

@_cdecl("barscope_swift_free")
public func barscopeSwiftFree(_ handle: UnsafeMutableRawPointer?) {
    guard let handle else { return }
    Unmanaged<ElementState>.fromOpaque(handle).release()
}

@_cdecl("barscope_swift_process")
public func barscopeSwiftProcess(
    _ handle: UnsafeMutableRawPointer?, _ filter: UnsafeMutablePointer<GstVideoFilter>?,
    _ frame: UnsafeMutablePointer<GstVideoFrame>?, _ settings: UnsafePointer<BarscopeSettings>?
) -> gboolean {
    guard let handle, let filter, let frame, let settings else { return 0 }
    let state = Unmanaged<ElementState>.fromOpaque(handle).takeUnretainedValue()
    return state.process(filter, frame, settings.pointee) ? 1 : 0
}

@_cdecl("barscope_swift_validate")
public func barscopeSwiftValidate(
    _ property: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?
) -> UnsafeMutablePointer<CChar>? {
    guard let property else { return nil }
    let name = String(cString: property)
    let text = value.map { String(cString: $0) }
    do {
        switch name {
        case "viewfinder": _ = try Viewfinder.parse(aspect: text ?? "off")
        case "insets": _ = try Viewfinder.parseInsets(text ?? "20")
        case "region": _ = try Viewfinder.parse(aspect: "off", region: text)
        case "symbologies":
            for v in (text ?? "").split(whereSeparator: { $0 == " " || $0 == "," }) {
                var s = ScannerSettings()
                try s.add(String(v))
            }
        default: break
        }
        return nil
    } catch {
        return g_strdup("\(name): \(error)")
    }
}
