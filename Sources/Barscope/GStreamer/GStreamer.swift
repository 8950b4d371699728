import CBarscope
import CGStreamer

/// Process-wide GStreamer set-up.
public enum GStreamer {
    private static let initialized: Bool = {
        gst_init(nil, nil)
        return true
    }()

    /// Calls `gst_init` once per process (safe from any thread: Swift runs a static initializer exactly once).
    public static func initialize() { _ = initialized }

    /// Fails with the Debian package to install when an element factory is missing.
    public static func require(_ factories: [String]) throws {
        initialize()
        for name in factories {
            guard let factory = gst_element_factory_find(name) else {
                throw BarscopeError.missingElement(name: name, package: debianPackage(for: name))
            }
            gst_object_unref(UnsafeMutableRawPointer(factory))  // transfer full
        }
    }

    /// Where a factory comes from on Debian 12 (nil for one Barscope does not know).
    static func debianPackage(for factory: String) -> String? {
        switch factory {
        case "tee", "queue", "fakesink", "filesink", "filesrc", "identity", "capsfilter", "valve", "multiqueue":
            return "libgstreamer1.0-0"
        case "videoconvert", "videoscale", "videorate", "appsink", "appsrc", "uridecodebin", "decodebin",
            "videotestsrc", "audiotestsrc", "playbin", "theoraenc", "oggmux":
            return "gstreamer1.0-plugins-base"
        case "jpegenc", "jpegdec", "pngenc", "pngdec", "multifilesink", "vp8enc", "vp9enc", "webmmux", "v4l2src",
            "imagefreeze", "udpsink", "udpsrc", "rtpjitterbuffer", "flvmux", "rtmpsink":
            return "gstreamer1.0-plugins-good"
        case "x264enc": return "gstreamer1.0-plugins-ugly"
        case "avdec_h264": return "gstreamer1.0-libav"
        case "cairooverlay", "videocrop", "matroskamux", "qtdemux", "rtspsrc", "ximagesink", "mp4mux", "splitmuxsink":
            return "gstreamer1.0-plugins-good"
        case "h264parse", "zbar", "intervideosink", "intervideosrc": return "gstreamer1.0-plugins-bad"
        case "rtph264pay": return "gstreamer1.0-plugins-good"
        case "autovideosink": return "gstreamer1.0-plugins-good"
        case "x265enc", "srtsink", "srtsrc", "webrtcbin", "kmssink": return "gstreamer1.0-plugins-bad"
        default: return nil
        }
    }
}

/// What GStreamer says when something fails: domain, code, message, debug string and the element that posted it.
public struct GStreamerError: Error, CustomStringConvertible, Sendable, Equatable {
    public var domain: String
    public var code: Int32
    public var message: String
    public var debug: String?
    /// Path of the element that posted the error (`/GstPipeline:pipeline0/GstFileSink:rec`).
    public var source: String?

    public init(domain: String, code: Int32, message: String, debug: String? = nil, source: String? = nil) {
        self.domain = domain
        self.code = code
        self.message = message
        self.debug = debug
        self.source = source
    }

    /// Takes over a `GError` (frees it).
    init(taking error: UnsafeMutablePointer<GError>, debug: String? = nil, source: String? = nil) {
        domain = String(cString: g_quark_to_string(error.pointee.domain))
        code = error.pointee.code
        message = String(cString: error.pointee.message)
        self.debug = debug
        self.source = source
        g_error_free(error)
    }

    public var description: String {
        if let source, let name = source.split(separator: ":").last { return "\(name): \(message)" }
        return message
    }

    /// The element's own name from its path, when it has one.
    public var sourceName: String? { source?.split(separator: ":").last.map(String.init) }

    public var isNotFound: Bool {
        domain == "gst-resource-error-quark" && code == GST_RESOURCE_ERROR_NOT_FOUND.rawValue
    }
    /// The input is not media GStreamer can decode: unknown type, wrong type, no decoder for it, broken stream.
    public var isTypeNotFound: Bool {
        (domain == "gst-core-error-quark" && code == GST_CORE_ERROR_MISSING_PLUGIN.rawValue)
            || domain == "gst-stream-error-quark"
                && (code == GST_STREAM_ERROR_TYPE_NOT_FOUND.rawValue || code == GST_STREAM_ERROR_WRONG_TYPE.rawValue
                    || code == GST_STREAM_ERROR_CODEC_NOT_FOUND.rawValue || code == GST_STREAM_ERROR_DEMUX.rawValue
                    || code == GST_STREAM_ERROR_DECODE.rawValue)
    }
}
