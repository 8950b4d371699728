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
// viewfinder and insets), symbologies (zbarimg -S values: "disable qrcode.enable"), style (the tool's --style
// pairs separated by ';': "box-color=#FF8800;labels=off"), threads (1: scan before the
// frame goes on, as the stock element; N > 1 or 0 = one per core: frames go on at once and N scanning threads post
// their messages in frame order, drained before EOS; drawing always scans in place).
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
import Foundation

/// Per-element runtime state, made in the element's start() and freed in its stop().
///
/// Sendable: `scanner`, the parsed settings, `grey` and `submitted` are used only from the streaming thread
/// (transform_frame_ip calls are serialized); the sequencer (tracker and in-order delivery) is behind `delivery`;
/// `pool` is made on the streaming thread and drained from the streaming or state-change thread.
final class ElementState: @unchecked Sendable {
    /// What a frame's messages need once its scan is done.
    /// Sendable: the sample is owned by this value, handed between threads, and released once after posting.
    struct Pending: @unchecked Sendable {
        var message: Bool
        var cache: Bool
        var attachFrame: Bool
        var sample: OpaquePointer?  // keeps the buffer alive until its messages are posted (async path)
    }

    var scanner = BarcodeReader()
    var engine = Engine.zbar
    var settings = ScannerSettings()
    var symbologies: String? = nil
    var viewfinderKey: [String?] = []
    var viewfinder = Viewfinder.off
    var grey: [UInt8] = []
    var renderer = OverlayRenderer(
        style: {
            var s = OverlayStyle()
            s.showStatus = false
            return s
        }())
    var styleKey: String? = nil
    /// Its place in the process's scanning pool (a file's lane: frames wait, never dropped).
    var pool: ScanLane? = nil
    var poolKey: (threads: Int, symbologies: String?, engine: Engine) = (0, nil, .zbar)
    var submitted = 0
    /// Results back in frame order through the tracker: the same sequencer as the tool's runs.
    let delivery = Locked(ResultSequencer<Pending>(lostAfterFrames: 5))
    /// Region of each frame handed to the pool, by sequence number.
    let regions = Locked<[Int: PixelRect?]>([:])
    /// The element, set once at creation (it owns this state, so it outlives it).
    let filter: UnsafeMutablePointer<GstVideoFilter>?

    init(filter: UnsafeMutablePointer<GstVideoFilter>?) { self.filter = filter }

    deinit { pool?.close() }

    /// Takes the settings that changed (their strings are only given when the generation moved).
    func configure(_ s: BarscopeSettings) {
        let symbologiesText = s.symbologies.map { String(cString: $0) }
        if symbologiesText != symbologies {
            symbologies = symbologiesText
            let values = (symbologiesText ?? "").split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
            // Validated when set; a value that slipped through is simply skipped.
            settings = ScannerSettings()
            for v in values { try? settings.add(v) }
            scanner = BarcodeReader(engine: engine, settings: settings)
        }
        let engineChoice = s.engine.flatMap { Engine(rawValue: String(cString: $0)) } ?? .zbar
        if engineChoice != engine {
            engine = engineChoice
            scanner = BarcodeReader(engine: engine, settings: settings)
        }
        let styleText = s.style.map { String(cString: $0) }
        if styleText != styleKey {
            styleKey = styleText
            var style = OverlayStyle()
            style.showStatus = false  // an element has no run to describe; the application draws its own
            try? style.apply(styleText ?? "")  // validated when set
            renderer = OverlayRenderer(style: style)
        }
        let key = [s.viewfinder, s.insets, s.region].map { $0.map { String(cString: $0) } }
        if key != viewfinderKey {
            viewfinderKey = key
            viewfinder =
                (try? Viewfinder.parse(aspect: key[0] ?? "off", insets: key[1] ?? "20", region: key[2])) ?? .off
        }
    }

    func process(
        _ filter: UnsafeMutablePointer<GstVideoFilter>, _ frame: UnsafeMutablePointer<GstVideoFrame>,
        _ s: BarscopeSettings, changed: Bool
    ) -> Bool {
        if changed { configure(s) }
        let width = Int(bs_frame_width(frame))
        let height = Int(bs_frame_height(frame))
        guard width > 0, height > 0, let plane = bs_frame_plane_data(frame, 0) else { return false }
        let stride = Int(bs_frame_plane_stride(frame, 0))
        let format = bs_frame_format(frame)
        let size = Size(width: width, height: height)
        let region = viewfinder.region(in: size)
        let area = region ?? PixelRect(x: 0, y: 0, width: width, height: height)
        let mapping = CropMapping(offsetX: area.x, offsetY: area.y)
        let isRGB = format == GST_VIDEO_FORMAT_BGRx || format == GST_VIDEO_FORMAT_BGRA
        let hasLuma = bs_format_has_luma_plane(format) != 0
        guard isRGB || hasLuma else { return false }
        let pending = Pending(
            message: s.message != 0, cache: s.cache != 0, attachFrame: s.attach_frame != 0, sample: nil)
        // Drawing is decided by how the frame was mapped, not by the property (which may flip meanwhile): a frame
        // passed through read-only is never written.
        let draws = s.draw != 0 && isRGB && barscope_frame_is_writable(frame) != 0

        let threads = s.threads == 0 ? ProcessInfo.processInfo.activeProcessorCount : Int(s.threads)
        if threads > 1 && !draws && hasLuma {
            // Asynchronous: the frame goes on at once; a worker scans it and its messages follow in order.
            if pool == nil || poolKey.threads != threads || poolKey.symbologies != symbologies
                || poolKey.engine != engine
            {
                pool?.close()
                let (settings, engine) = (settings, engine)
                pool = ScanPool.shared.open(
                    name: "element", live: false, maxInFlight: threads,
                    makeReader: { BarcodeReader(engine: engine, settings: settings) }
                ) { [weak self] scanner, job in
                    // Its frames leave in order through its own sequencer (`delivery`), not the lane's.
                    self?.scanQueued(job, with: scanner)
                    return [.init(sequence: job.sequence, run: nil)]
                }
                poolKey = (threads, symbologies, engine)
            }
            guard let caps = gst_video_info_to_caps(&frame.pointee.info) else { return false }
            let sample = gst_sample_new(frame.pointee.buffer, caps, nil, nil)
            gst_caps_unref(caps)
            guard let sample else { return false }
            let sequence = submitted
            submitted += 1
            var queued = pending
            queued.sample = gst_sample_ref(sample)
            regions.withLock { $0[sequence] = region }
            pending_.withLock { $0[sequence] = queued }
            // The element's own count is the frame's number: its lane never drops, so frames leave in that order.
            pool?.submit(ScanPool.Job(frame: sequence, ptsNs: nil, sample: sample))
            return true
        }
        // Synchronous: scan, report and draw before the frame goes on (the stock element's behaviour).
        drain()
        var detections: [Detection]
        if isRGB {
            detections = scanBGR(plane, stride: stride, area: area, mapping: mapping, region: region)
        } else {
            let luma = LumaImage(base: UnsafeRawPointer(plane), width: width, height: height, stride: stride)
            detections = luma.cropped(to: area).map { scanner.read($0, mapping: mapping, viewfinder: region) } ?? []
        }
        let disputed = scanner.takeDisputes()
        let ready = delivery.withLock { d in
            d.addNow(frame: -1, ptsNs: nil, detections: detections, disputed: disputed, payload: pending)
        }
        post(ready, buffer: frame.pointee.buffer)
        if draws {
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

    /// What each queued frame's messages need, by sequence number.
    let pending_ = Locked<[Int: Pending]>([:])

    /// A scanning thread: scan the frame's region, then post every frame that is ready, in order. Posting happens
    /// under the sequencer's lock: messages must leave in frame order, and posting to the bus does not call back.
    func scanQueued(_ job: ScanPool.Job, with scanner: BarcodeReader) {
        guard let region = regions.withLock({ $0.removeValue(forKey: job.frame) }),
            let pending = pending_.withLock({ $0.removeValue(forKey: job.frame) })
        else { return }
        let mapping = CropMapping(region: region)
        let detections: [Detection] =
            withLumaPlane(of: job.sample) { luma, _ -> [Detection] in
                let area = region.flatMap { luma.cropped(to: $0) } ?? luma
                return scanner.read(area, mapping: mapping, viewfinder: region)
            } ?? []
        let disputed = scanner.takeDisputes()
        delivery.withLock { d in
            let ready = d.add(
                .init(
                    sequence: job.frame, frame: -1, ptsNs: nil, detections: detections, disputed: disputed,
                    payload: pending))
            for r in ready {
                if let sample = r.payload.sample, let buffer = gst_sample_get_buffer(sample) { post(r, buffer: buffer) }
                if let sample = r.payload.sample { gst_sample_unref(sample) }
            }
        }
    }

    /// Every frame handed to the pool has been reported.
    func drain() { pool?.waitIdle() }

    private func post(_ r: ResultSequencer<Pending>.Delivered, buffer: UnsafeMutablePointer<GstBuffer>) {
        let p = r.payload
        guard p.message, let filter else { return }
        var report = Array(zip(r.detections, r.tracks))
        if p.cache {
            // Like the stock element's cache: a code is reported when it appears, not on every frame.
            let fresh = Set(r.appeared)
            report = report.filter { fresh.contains($0.1) }
        }
        for (det, _) in report {
            var xy: [Int32] = []
            for pt in det.polygon { xy += [Int32(pt.x.rounded()), Int32(pt.y.rounded())] }
            var bounds: [Int32] = [
                Int32(det.bounds.x), Int32(det.bounds.y), Int32(det.bounds.width), Int32(det.bounds.height),
            ]
            barscope_post_barcode(
                filter, buffer, det.type, det.data, Int32(det.quality), &xy, UInt32(det.polygon.count), &bounds,
                p.attachFrame ? 1 : 0)
        }
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
            scanner.read(
                LumaImage(base: buf.baseAddress!, width: area.width, height: area.height, stride: area.width),
                mapping: mapping, viewfinder: region)
        }
    }
}

@_cdecl("barscope_swift_new")
public func barscopeSwiftNew(_ filter: UnsafeMutablePointer<GstVideoFilter>?) -> UnsafeMutableRawPointer {
    Unmanaged.passRetained(ElementState(filter: filter)).toOpaque()
}

@_cdecl("barscope_swift_free")
public func barscopeSwiftFree(_ handle: UnsafeMutableRawPointer?) {
    guard let handle else { return }
    Unmanaged<ElementState>.fromOpaque(handle).release()
}

@_cdecl("barscope_swift_process")
public func barscopeSwiftProcess(
    _ handle: UnsafeMutableRawPointer?, _ filter: UnsafeMutablePointer<GstVideoFilter>?,
    _ frame: UnsafeMutablePointer<GstVideoFrame>?, _ settings: UnsafePointer<BarscopeSettings>?, _ changed: gboolean
) -> gboolean {
    guard let handle, let filter, let frame, let settings else { return 0 }
    let state = Unmanaged<ElementState>.fromOpaque(handle).takeUnretainedValue()
    return state.process(filter, frame, settings.pointee, changed: changed != 0) ? 1 : 0
}

@_cdecl("barscope_swift_drain")
public func barscopeSwiftDrain(_ handle: UnsafeMutableRawPointer?) {
    guard let handle else { return }
    Unmanaged<ElementState>.fromOpaque(handle).takeUnretainedValue().drain()
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
        case "style":
            var style = OverlayStyle()
            try style.apply(text ?? "")
        case "engine": _ = try Engine.parse(text ?? "zbar")
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
