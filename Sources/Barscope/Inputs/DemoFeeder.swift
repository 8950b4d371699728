import CBarscope
import CGStreamer
import CGStreamerApp
import CGStreamerVideo
import Glibc

/// Feeds the demo scene into an `appsrc`, one frame per `need-data`, timestamps n × frame duration.
///
/// A run's demo hands out I420, as a camera or a decoder does: the scanner reads its luma plane with no conversion,
/// and a frame is 3 MB at 1080p instead of 8. The scene is drawn with cairo on a BGRx canvas kept from frame to
/// frame; each frame copies the background's I420 and converts only the areas the scene drew on
/// (`DemoScene.foregroundAreas`). The media writers take BGRx (their encoders convert, as they always did).
///
/// Sendable: `next` is touched only on appsrc's streaming thread, which runs need-data one call at a time.
final class DemoFeeder: @unchecked Sendable {
    enum Format { case bgrx, i420 }
    let scene: DemoScene
    let frames: Int
    let format: Format
    private var next = 0
    private var live = false
    private var started: ContinuousClock.Instant? = nil
    /// The scene's background, drawn once and copied into every frame (streaming thread only).
    private var background: [UInt8] = []
    /// I420: the canvas the scene draws on (the background, and the last frame's foreground in `drawnAreas`), the
    /// background's planes, and the converter (streaming thread only).
    private var canvas: [UInt8] = []
    private var drawnAreas: [PixelRect]? = nil
    private var backgroundPlanes: (y: [UInt8], u: [UInt8], v: [UInt8]) = ([], [], [])
    private let converter: I420Converter
    /// Frames come from a pool and go back to it when the pipeline is done with them: a fresh 8 MB allocation per
    /// 1080p frame made the process's resident memory jump by a frame whenever malloc handed one back (streaming
    /// thread only; given up in deinit).
    private var pool: UnsafeMutablePointer<GstBufferPool>? = nil
    /// Whether the pool was tried: one that could not start is not tried again for every frame.
    private var poolTried = false
    /// Frames the pool holds from the start. It grows past them when more are in flight at once; growing late, a
    /// frame at a time (a moment of congestion in a long live run), is a step in resident memory a soak cannot tell
    /// from a leak. A run that draws keeps more frames in flight (the overlay's and the recording's queues).
    private let framesUpFront: Int

    /// - Parameter framesUpFront: frames the pool allocates when it starts (it grows past them when needed).
    init(options: DemoOptions, framesUpFront: Int = 2, format: Format = .i420) {
        scene = DemoScene(
            size: options.size, fps: options.fps, kind: options.scene, seed: options.seed, mix: options.mix)
        frames = options.frames
        self.format = format
        converter = I420Converter(height: options.size.height)
        self.framesUpFront = max(1, framesUpFront)
    }

    var caps: String {
        let size = "width=\(scene.size.width),height=\(scene.size.height),framerate=\(scene.fps)/1"
        switch format {
        case .bgrx: return "video/x-raw,format=BGRx,\(size)"
        case .i420: return "video/x-raw,format=I420,\(size),colorimetry=\(converter.colorimetry)"
        }
    }

    /// One frame's layout (GStreamer's for the caps).
    private lazy var frameInfo: GstVideoInfo = {
        var info = GstVideoInfo()
        if let made = gst_caps_from_string(caps) {
            _ = gst_video_info_from_caps(&info, made)
            gst_caps_unref(made)
        }
        return info
    }()

    /// Configures the appsrc and installs the need-data callback. The appsrc keeps a reference to the feeder,
    /// released by the destroy notify.
    func attach(to element: UnsafeMutablePointer<GstElement>, live: Bool) {
        setProperty(element, "caps", caps)
        setProperty(element, "format", "time")
        bs_set_bool(element, "is-live", live ? 1 : 0)
        // Live, like a camera: frames are produced at the frame rate and stamped with the pipeline's running time
        // when they are pushed. Otherwise, as fast as downstream takes them, stamped n × frame duration.
        bs_set_bool(element, "do-timestamp", live ? 1 : 0)
        self.live = live
        var callbacks = GstAppSrcCallbacks()
        callbacks.need_data = { src, _, data in
            guard let src, let data else { return }
            bs_handoff_receive(data)
            defer { bs_handoff_publish(data) }
            Unmanaged<DemoFeeder>.fromOpaque(data).takeUnretainedValue().pushFrame(src)
        }
        // appsrc's object lock orders this thread's work before each need-data; ThreadSanitizer is told so
        // (bs_handoff_*, CBarscope.h).
        let context = Unmanaged.passRetained(self).toOpaque()
        bs_handoff_publish(context)
        gst_app_src_set_callbacks(bs_app_src(element), &callbacks, context) { data in
            guard let data else { return }
            bs_handoff_receive(data)
            Unmanaged<DemoFeeder>.fromOpaque(data).release()
        }
    }

    private func pushFrame(_ src: UnsafeMutablePointer<GstAppSrc>) {
        if frames > 0 && next >= frames {
            gst_app_src_end_of_stream(src)
            return
        }
        guard let buffer = acquireBuffer(bytes: frameBytes) else { return }
        draw(frame: next, into: buffer)
        let duration = UInt64(1_000_000_000) / UInt64(scene.fps)
        if live {
            let start = started ?? ContinuousClock.now
            started = start
            let wait = (start + .nanoseconds(Int64(next) * Int64(duration))) - ContinuousClock.now
            if wait > .zero {
                let (s, atto) = wait.components
                var ts = timespec(tv_sec: Int(s), tv_nsec: Int(atto / 1_000_000_000))
                nanosleep(&ts, nil)  // the source thread may block, as a camera's does
            }
        } else {
            bs_buffer_set_pts(buffer, UInt(UInt64(next) * 1_000_000_000 / UInt64(scene.fps)))
        }
        bs_buffer_set_duration(buffer, UInt(duration))
        next += 1
        _ = gst_app_src_push_buffer(src, buffer)  // takes the buffer
    }

    /// Bytes of one frame.
    var frameBytes: Int { Int(frameInfo.size) }

    /// Draws frame `n` into a buffer of `frameBytes`. Frames come in order (the I420 canvas keeps the last one's
    /// areas to put back); one out of order is still whole and right.
    func draw(frame n: Int, into buffer: UnsafeMutablePointer<GstBuffer>) {
        switch format {
        case .bgrx: drawBGRx(frame: n, into: buffer)
        case .i420: drawI420(frame: n, into: buffer)
        }
    }

    private func drawBGRx(frame n: Int, into buffer: UnsafeMutablePointer<GstBuffer>) {
        let stride = scene.size.width * 4
        let bytes = stride * scene.size.height
        var map = GstMapInfo()
        guard gst_buffer_map(buffer, &map, GST_MAP_WRITE) != 0 else { return }
        defer { gst_buffer_unmap(buffer, &map) }
        drawBackground(bytes: bytes, stride: stride)
        background.withUnsafeBytes { _ = memcpy(map.data, $0.baseAddress!, bytes) }
        scene.render(frame: n, into: map.data, stride: stride, background: true)
    }

    private func drawBackground(bytes: Int, stride: Int) {
        guard background.count != bytes else { return }
        background = [UInt8](repeating: 0, count: bytes)
        background.withUnsafeMutableBytes { scene.renderBackground(into: $0.baseAddress!, stride: stride) }
    }

    /// The next frame on the canvas (the last frame's areas back to the background first), then into the buffer:
    /// the background's planes, and the areas drawn on converted.
    private func drawI420(frame n: Int, into buffer: UnsafeMutablePointer<GstBuffer>) {
        let (width, height) = (scene.size.width, scene.size.height)
        let stride = width * 4
        drawBackground(bytes: stride * height, stride: stride)
        var frame = GstVideoFrame()
        guard gst_video_frame_map(&frame, &frameInfo, buffer, GST_MAP_WRITE) != 0,
            let y = bs_frame_plane_data(&frame, 0), let u = bs_frame_plane_data(&frame, 1),
            let v = bs_frame_plane_data(&frame, 2)
        else { return }
        defer { gst_video_frame_unmap(&frame) }
        let planes = I420Planes(
            y: y, u: u, v: v, yStride: Int(bs_frame_plane_stride(&frame, 0)),
            uStride: Int(bs_frame_plane_stride(&frame, 1)), vStride: Int(bs_frame_plane_stride(&frame, 2)))
        let whole = PixelRect(x: 0, y: 0, width: width, height: height)
        let chromaRows = (height + 1) / 2
        if backgroundPlanes.y.isEmpty {
            backgroundPlanes = (
                [UInt8](repeating: 0, count: planes.yStride * height),
                [UInt8](repeating: 0, count: planes.uStride * chromaRows),
                [UInt8](repeating: 0, count: planes.vStride * chromaRows)
            )
            background.withUnsafeBytes { bg in
                converter.convert(
                    bg.baseAddress!.assumingMemoryBound(to: UInt8.self), stride: stride, width: width, height: height,
                    area: whole, into: planes)
            }
            memcpy(&backgroundPlanes.y, y, planes.yStride * height)
            memcpy(&backgroundPlanes.u, u, planes.uStride * chromaRows)
            memcpy(&backgroundPlanes.v, v, planes.vStride * chromaRows)
            canvas = background
        } else {
            memcpy(y, backgroundPlanes.y, planes.yStride * height)
            memcpy(u, backgroundPlanes.u, planes.uStride * chromaRows)
            memcpy(v, backgroundPlanes.v, planes.vStride * chromaRows)
        }
        let areas = scene.foregroundAreas(frame: n)
        canvas.withUnsafeMutableBytes { raw in
            let c = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            background.withUnsafeBytes { bg in
                let b = bg.baseAddress!.assumingMemoryBound(to: UInt8.self)
                for r in drawnAreas ?? [] {
                    for row in r.y..<r.maxY {
                        let at = row * stride + r.x * 4
                        (c + at).update(from: b + at, count: r.width * 4)
                    }
                }
            }
            scene.render(frame: n, into: raw.baseAddress!, stride: stride, background: true)
            for r in areas {
                converter.convert(c, stride: stride, width: width, height: height, area: r, into: planes)
            }
        }
        drawnAreas = areas
    }

    /// A frame-sized buffer from the feeder's pool (made on first use, unbounded: appsrc's own queue bounds how
    /// many are out), or a plain allocation if the pool could not start.
    private func acquireBuffer(bytes: Int) -> UnsafeMutablePointer<GstBuffer>? {
        if !poolTried, let made = gst_buffer_pool_new() {
            poolTried = true
            let config = gst_buffer_pool_get_config(made)
            let frameCaps = gst_caps_from_string(caps)
            gst_buffer_pool_config_set_params(config, frameCaps, UInt32(bytes), UInt32(framesUpFront), 0)
            if frameCaps != nil { gst_caps_unref(frameCaps) }
            if gst_buffer_pool_set_config(made, config) != 0, gst_buffer_pool_set_active(made, 1) != 0 {
                pool = made
            } else {
                gst_object_unref(made)
            }
        }
        var buffer: UnsafeMutablePointer<GstBuffer>? = nil
        if let pool, gst_buffer_pool_acquire_buffer(pool, &buffer, nil) == GST_FLOW_OK, let buffer {
            return buffer
        }
        return gst_buffer_new_allocate(nil, UInt(bytes), nil)
    }

    deinit {
        if let pool {
            // Buffers still downstream keep the pool alive and are freed when they come back.
            gst_buffer_pool_set_active(pool, 0)
            gst_object_unref(pool)
        }
    }
}
