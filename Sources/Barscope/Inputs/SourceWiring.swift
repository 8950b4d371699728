import CBarscope
import CGStreamer

/// Each kind of source: its part of the graph (ending in the tee `t`) and the user's values set on it as
/// properties, never pasted into the description.
enum SourceWiring {
    static func plan(_ c: RunConfiguration, camera: CameraChoice?, into plan: inout GraphPlan) {
        switch c.input {
        case .demo: plan.add("appsrc name=src ! tee name=t")
        case .uri: plan.add("uridecodebin name=src ! tee name=t")
        // imagefreeze repeats the one decoded picture at a rate, so that a recording of it has a duration.
        case .image:
            plan.add("uridecodebin name=src ! imagefreeze name=freeze ! capsfilter name=freezecaps ! tee name=t")
        // The file's author wrote it; user values reach it as properties on its named elements.
        case .launch(let fragment, _):
            plan.addFragment(fragment)
            plan.add("! tee name=t")
        case .device:
            let decode = camera?.needsJPEGDecoder == true ? "jpegdec ! videoconvert" : "videoconvert"
            plan.add("v4l2src name=src ! capsfilter name=camcaps ! \(decode) ! tee name=t")
        }
    }

    /// What stays attached to the graph while it runs.
    struct Wired {
        /// For a file: goes on past a stretch its demuxer cannot read.
        var skipDamage: SkipDamage? = nil
        /// Our source element (nil for a pipeline file's own source), for telling its errors apart.
        var source: UnsafeMutablePointer<GstElement>? = nil
    }

    /// Sets the source's properties and connects what it needs.
    /// - Parameter emit: for SkipDamage's warnings.
    static func wire(
        _ pipeline: Pipeline, _ c: RunConfiguration, camera: CameraChoice?, emit: @escaping @Sendable (Event) -> Void
    ) throws -> Wired {
        let src = pipeline.child("src")
        if case .launch = c.input { return Wired(source: src) }
        guard let src, let tee = pipeline.child("t") else { throw BarscopeError.pipeline(.incomplete) }
        var wired = Wired(source: src)
        switch c.input {
        case .demo(let options):
            // A live run that draws for an output: 8 frames up front (7 were seen in flight with a recording, by
            // gdb). A service instance with only its preview draws while watched only: it keeps few in flight.
            DemoFeeder(options: options, framesUpFront: c.drawsForOutputs && c.input.isLive ? 8 : 2)
                .attach(to: src, live: c.input.isLive)
        case .uri(let uri, _):
            bs_set_string(src, "uri", uri)
            if uri.lowercased().hasPrefix("rtsp") { RTSPSetup(c).connect(to: src) }
            // Only video is decoded; audio streams are left alone instead of failing to link.
            setProperty(src, "caps", "video/x-raw(ANY)")
            bs_set_bool(src, "expose-all-streams", 0)
            // A file whose demuxer gives up at damage is scanned on past it (its probe first on the tee).
            if !c.input.isLive, let pad = GstRef<GstPad>.staticPad(tee, "sink") {
                wired.skipDamage = SkipDamage(pad: pad.pointer, name: c.input.description, report: emit)
            }
        case .image(let uri, _):
            bs_set_string(src, "uri", uri)
            setProperty(src, "caps", "video/x-raw(ANY)")
            if let freeze = pipeline.child("freeze"), let rate = pipeline.child("freezecaps") {
                bs_set_int(freeze, "num-buffers", c.imageFrames == 0 ? -1 : Int32(clamping: c.imageFrames))
                setProperty(rate, "caps", "video/x-raw,framerate=\(c.imageFPS)/1")
            }
        case .device(let path):
            bs_set_string(src, "device", path)
            if let camera, let filter = pipeline.child("camcaps") { setProperty(filter, "caps", camera.caps) }
        case .launch: break
        }
        return wired
    }
}

/// RTSP's transport, latency and credentials, set on the rtspsrc that uridecodebin makes (its source-setup signal,
/// any thread). The handler holds this value; the signal's destroy-notify releases it with the element.
final class RTSPSetup: Sendable {
    let transport: String?
    let latencyMs: Int?
    let credentials: RTSPCredentials?

    init(_ c: RunConfiguration) {
        transport = c.rtspTransport
        latencyMs = c.rtspLatencyMs
        // Credentials given apart from the URI: rtspsrc's own properties (those in the URI win: rtspsrc reads them
        // from its location).
        if case .uri(let uri, _) = c.input, Redact.uri(uri) == uri {
            credentials = c.rtspCredentials
        } else {
            credentials = nil
        }
    }

    func connect(to uridecodebin: UnsafeMutablePointer<GstElement>) {
        // GLib's signal lock orders this thread's work before the call on a streaming thread; ThreadSanitizer is
        // told so (bs_handoff_*, CBarscope.h).
        let me = Unmanaged.passRetained(self).toOpaque()
        bs_handoff_publish(me)
        bs_connect_source_setup(
            uridecodebin,
            { _, source, data in
                guard let source, let data else { return }
                bs_handoff_receive(data)
                defer { bs_handoff_publish(data) }
                Unmanaged<RTSPSetup>.fromOpaque(data).takeUnretainedValue().apply(to: source)
            }, me,
            { data, _ in
                guard let data else { return }
                bs_handoff_receive(data)
                Unmanaged<RTSPSetup>.fromOpaque(data).release()
            })
    }

    private func apply(to source: UnsafeMutablePointer<GstElement>) {
        if let t = transport, bs_has_property(source, "protocols") != 0 {
            setProperty(source, "protocols", t == "tcp" ? "tcp" : "udp")
        }
        if let ms = latencyMs, bs_has_property(source, "latency") != 0 { bs_set_uint(source, "latency", UInt32(ms)) }
        if let k = credentials, bs_has_property(source, "user-id") != 0 {
            bs_set_string(source, "user-id", k.user)
            bs_set_string(source, "user-pw", k.password)
        }
    }
}

extension GStreamerError {
    /// Our own description lacks an element it names (a bug of ours, never the user's).
    static let incomplete = GStreamerError(domain: "barscope", code: 0, message: "graph incomplete")
}
