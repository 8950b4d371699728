import CBarscope
import CGStreamer

/// One owned reference to a GstObject (an element, a pad, a bus), released in `deinit`.
///
/// The initializer's label says what happens to the reference it is given, as GStreamer documents the call that
/// made it: `taking:` for transfer full (`gst_element_get_static_pad`, `gst_element_get_bus`), `retaining:` for
/// transfer none (a borrowed pointer we must keep alive).
/// Sendable: GstObject reference counting is atomic; what callers do with `pointer` is theirs to make safe.
final class GstRef<T>: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<T>

    init(taking pointer: UnsafeMutablePointer<T>) { self.pointer = pointer }

    init(retaining pointer: UnsafeMutablePointer<T>) {
        gst_object_ref(UnsafeMutableRawPointer(pointer))
        self.pointer = pointer
    }

    /// nil stays nil: `GstRef(taking: gst_element_get_static_pad(e, "sink"))`.
    convenience init?(taking pointer: UnsafeMutablePointer<T>?) {
        guard let pointer else { return nil }
        self.init(taking: pointer)
    }

    deinit { gst_object_unref(UnsafeMutableRawPointer(pointer)) }
}

extension GstRef where T == GstPad {
    /// An element's always-present pad (`gst_element_get_static_pad`, transfer full).
    static func staticPad(_ element: UnsafeMutablePointer<GstElement>, _ name: String) -> GstRef<GstPad>? {
        GstRef(taking: gst_element_get_static_pad(element, name))
    }
}
