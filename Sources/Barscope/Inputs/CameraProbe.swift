import CBarscope
import CGStreamer

/// Asks a V4L2 camera what it offers: `v4l2src` alone, brought to READY (the device open, nothing streaming),
/// its source pad's caps queried (`gst_pad_query_caps`), then closed again before the real graph opens it.
enum CameraProbe {
    /// - Throws: ``BarscopeError/badInput`` naming the device when it cannot be opened or is not a camera.
    static func modes(device: String) throws -> [CameraMode] {
        try GStreamer.require(["v4l2src"])
        guard let made = gst_element_factory_make("v4l2src", nil) else { return [] }
        let src = gst_object_ref_sink(made).assumingMemoryBound(to: GstElement.self)
        // An element outside a pipeline has no bus; ours receives the reason a state change fails.
        let bus = gst_bus_new()
        gst_element_set_bus(src, bus)
        defer {
            gst_element_set_state(src, GST_STATE_NULL)
            gst_element_set_bus(src, nil)
            gst_object_unref(bus)
            gst_object_unref(src)
        }
        bs_set_string(src, "device", device)
        if gst_element_set_state(src, GST_STATE_READY) == GST_STATE_CHANGE_FAILURE {
            var reason = "cannot open it"
            if let msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR) {
                defer { gst_message_unref(msg) }
                let e = parseBusProblem(msg, warning: false)
                // v4l2src's debug string ends with the system's reason ("system error: Permission denied").
                let system = e.debug?.components(separatedBy: "system error: ").dropFirst().last
                reason = e.message.hasSuffix(".") ? String(e.message.dropLast()) : e.message
                if let system, system != "Success" { reason += ": \(system)" }
            }
            throw BarscopeError.badInput("\(device): not a camera barscope can open (\(reason))")
        }
        guard let pad = gst_element_get_static_pad(src, "src") else { return [] }
        defer { gst_object_unref(pad) }
        guard let caps = gst_pad_query_caps(pad, nil) else { return [] }
        defer { gst_caps_unref(caps) }
        return CameraMode.modes(caps: caps)
    }
}
