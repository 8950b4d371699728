import CBarscope
import CGStreamer
import Foundation

/// A GStreamer pipeline built from a launch description of our own fragments; user values (paths, URIs) are set
/// afterwards as properties on named elements, never pasted into the description.
///
/// Owns exactly one reference to the pipeline, released in `deinit` after going to NULL.
public final class Pipeline {
    public let element: UnsafeMutablePointer<GstElement>

    /// - Throws: ``BarscopeError/pipeline`` when the description does not parse (`gst_parse_launch`).
    public init(launch description: String) throws {
        GStreamer.initialize()
        var error: UnsafeMutablePointer<GError>? = nil
        let made = gst_parse_launch(description, &error)
        if let error {
            if let made { gst_object_unref(made) }
            let e = GStreamerError(taking: error)
            // Told by its domain and code; only the element's name is read from the text, which is the one place it
            // is given: "no element \"x264enc\"" (quoted either way, by GStreamer version).
            if e.domain == String(cString: g_quark_to_string(gst_parse_error_quark())),
                e.code == Int32(GST_PARSE_ERROR_NO_SUCH_ELEMENT.rawValue),
                let missing = e.message.split(whereSeparator: { $0 == "'" || $0 == "\"" }).dropFirst().first
            {
                throw BarscopeError.missingElement(
                    name: String(missing), package: GStreamer.debianPackage(for: String(missing)))
            }
            throw BarscopeError.pipeline(e)
        }
        guard let made else {
            throw BarscopeError.pipeline(GStreamerError(domain: "barscope", code: 0, message: "empty pipeline"))
        }
        // gst_parse_launch returns a floating reference: sink it so this object owns one plain reference.
        element = made
        gst_object_ref_sink(made)
    }

    deinit {
        gst_element_set_state(element, GST_STATE_NULL)
        gst_object_unref(element)
    }

    /// A named element of the pipeline, borrowed for the pipeline's lifetime (transfer none).
    public func child(_ name: String) -> UnsafeMutablePointer<GstElement>? {
        guard let e = gst_bin_get_by_name(bs_bin(element), name) else { return nil }
        gst_object_unref(e)  // the pipeline keeps it alive
        return e
    }

    @discardableResult
    public func setState(_ state: GstState) -> GstStateChangeReturn { gst_element_set_state(element, state) }

    /// Sets it to NULL, waiting at most `seconds`: an element that hangs in its teardown (rtspsrc, its task waiting
    /// on a pad lock its own streaming thread holds) must not hang the run. On a timeout the state change goes on
    /// in its thread, which keeps the pipeline alive; the caller says so and goes on.
    /// - Returns: false when it had not stopped in time.
    func stop(within seconds: Double) -> Bool {
        let done = DispatchSemaphore(value: 0)
        // Sendable: the pipeline is used by the teardown thread alone from here; the box keeps it alive while that
        // runs.
        final class Keep: @unchecked Sendable {
            let pipeline: Pipeline
            init(_ pipeline: Pipeline) { self.pipeline = pipeline }
        }
        let keep = Keep(self)
        let thread = Thread {
            _ = gst_element_set_state(keep.pipeline.element, GST_STATE_NULL)
            done.signal()
        }
        thread.name = "barscope-teardown"
        thread.start()
        return done.wait(timeout: .now() + seconds) == .success
    }

    /// Waits up to `timeoutNs` for the next message of interest; returns it owned (caller unrefs).
    func popMessage(timeoutNs: UInt64) -> UnsafeMutablePointer<GstMessage>? {
        guard let bus = gst_element_get_bus(element) else { return nil }
        defer { gst_object_unref(bus) }
        let types =
            GST_MESSAGE_EOS.rawValue | GST_MESSAGE_ERROR.rawValue | GST_MESSAGE_WARNING.rawValue
            | GST_MESSAGE_STATE_CHANGED.rawValue | GST_MESSAGE_ELEMENT.rawValue | GST_MESSAGE_APPLICATION.rawValue
        return gst_bus_timed_pop_filtered(bus, GstClockTime(timeoutNs), GstMessageType(rawValue: types))
    }

    /// The application message that only ends a wait on the bus (a request came, a streaming thread found a problem).
    static let wakeMessage = "barscope-wake"

    /// Wakes whoever waits on this pipeline's bus: posted from any thread, and kept on the bus until popped, so a
    /// wake that comes before the wait is not lost.
    public func wake() { Self.wake(element) }

    /// The same through any element of a pipeline (its bin forwards the message to the pipeline's bus).
    static func wake(_ element: UnsafeMutablePointer<GstElement>) {
        if let message = gst_message_new_application(bs_gst_object(element), gst_structure_new_empty(wakeMessage)) {
            _ = gst_element_post_message(element, message)
        }
    }

    /// Sends EOS into the sources so that every sink (muxers above all) finishes its file.
    public func sendEOS() { _ = gst_element_send_event(element, gst_event_new_eos()) }

    /// Posts an error on the pipeline's bus, as a failing element would (fault drills: the restart policy's tests).
    public func postError(_ message: String) {
        // g_quark_from_string copies the name: a Swift literal passed as a C string may be a temporary copy, which
        // the _static_ variant would keep a pointer to (AddressSanitizer caught that use after free).
        let error = g_error_new_literal(g_quark_from_string("barscope-injected-error"), 1, message)
        if let msg = gst_message_new_error(bs_gst_object(element), error, "injected") {
            _ = gst_element_post_message(element, msg)
        }
        g_error_free(error)
    }
}

/// Reads the error or warning carried by a bus message.
func parseBusProblem(_ msg: UnsafeMutablePointer<GstMessage>, warning: Bool) -> GStreamerError {
    var error: UnsafeMutablePointer<GError>? = nil
    var debug: UnsafeMutablePointer<gchar>? = nil
    if warning { gst_message_parse_warning(msg, &error, &debug) } else { gst_message_parse_error(msg, &error, &debug) }
    let debugText = debug.map { String(cString: $0) }
    g_free(debug)
    var path: String? = nil
    if let src = bs_message_src(msg), let p = gst_object_get_path_string(src) {
        path = String(cString: p)
        g_free(p)
    }
    guard let error else { return GStreamerError(domain: "unknown", code: 0, message: "unknown error", source: path) }
    return GStreamerError(taking: error, debug: debugText, source: path)
}

/// Sets a property from its string form (`gst_util_set_object_arg`: enums by nick, caps by string, numbers).
func setProperty(_ element: UnsafeMutablePointer<GstElement>, _ name: String, _ value: String) {
    gst_util_set_object_arg(bs_object(element), name, value)
}

extension Pipeline {
    /// Plays to end of stream; throws the first error. For short finite jobs (encoding a clip, counting frames).
    public func playToEnd(timeoutSeconds: Double = 600) throws {
        // A failed state change leaves its reason on the bus, read below.
        setState(GST_STATE_PLAYING)
        let deadline = ContinuousClock.now + .milliseconds(Int(timeoutSeconds * 1000))
        defer { setState(GST_STATE_NULL) }
        while ContinuousClock.now < deadline {
            guard let msg = popMessage(timeoutNs: 100_000_000) else { continue }
            defer { gst_message_unref(msg) }
            switch bs_message_type(msg) {
            case GST_MESSAGE_EOS: return
            case GST_MESSAGE_ERROR: throw BarscopeError.pipeline(parseBusProblem(msg, warning: false))
            default: continue
            }
        }
        throw BarscopeError.pipeline(
            GStreamerError(domain: "barscope", code: 0, message: "no end of stream within \(Int(timeoutSeconds)) s"))
    }
}
