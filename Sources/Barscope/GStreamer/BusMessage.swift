import CBarscope
import CGStreamer

/// What the run loop reads from the pipeline's bus, as a value: the one place that parses `GstMessage`.
enum BusMessage {
    case endOfStream
    /// An element failed; `origin` is the element that posted it (borrowed for the message's life: compare only).
    case error(GStreamerError, origin: UnsafeMutablePointer<GstObject>?)
    case warning(GStreamerError)
    /// The pipeline itself (not one of its children) reached `state`.
    case pipelineState(GstState)
    /// An application message posted by our own probes (by its structure's name).
    case application(String)
    case other

    /// - Parameter pipeline: to tell the pipeline's own state changes from its children's.
    init(_ msg: UnsafeMutablePointer<GstMessage>, pipeline: UnsafeMutablePointer<GstElement>) {
        switch bs_message_type(msg) {
        case GST_MESSAGE_EOS: self = .endOfStream
        case GST_MESSAGE_ERROR: self = .error(parseBusProblem(msg, warning: false), origin: bs_message_src(msg))
        case GST_MESSAGE_WARNING: self = .warning(parseBusProblem(msg, warning: true))
        case GST_MESSAGE_STATE_CHANGED:
            guard bs_message_src(msg) == bs_gst_object(pipeline) else {
                self = .other
                return
            }
            var old = GST_STATE_NULL
            var new = GST_STATE_NULL
            var pending = GST_STATE_NULL
            gst_message_parse_state_changed(msg, &old, &new, &pending)
            self = .pipelineState(new)
        case GST_MESSAGE_APPLICATION:
            guard let structure = gst_message_get_structure(msg) else {
                self = .other
                return
            }
            self = .application(String(cString: gst_structure_get_name(structure)))
        default: self = .other
        }
    }
}

/// Whether `object` is `element` or inside it (an rtspsrc made inside uridecodebin, splitmuxsink's own filesink).
func isWithin(_ object: UnsafeMutablePointer<GstObject>?, _ element: UnsafeMutablePointer<GstElement>?) -> Bool {
    guard let object, let element else { return false }
    let e = bs_gst_object(element)
    return object == e || gst_object_has_as_ancestor(object, e) != 0
}
