import CBarscope
import CGStreamer

/// A pad probe as a token: installed by `init`, removed by `remove()` or when the token goes; the Swift closure is
/// kept alive by GStreamer and released through the probe's destroy-notify, so it lives exactly as long as the probe.
final class PadProbe: @unchecked Sendable {
    // Sendable: `pad` is an owned reference; gst_pad_remove_probe is thread-safe; `id` is set once.
    typealias Body = @Sendable (UnsafeMutablePointer<GstPadProbeInfo>) -> GstPadProbeReturn

    private let pad: GstRef<GstPad>
    private let id: gulong
    private let removed = Locked(false)

    /// The closure's box, handed to GStreamer with one reference released by the destroy-notify.
    private final class Box {
        let body: Body
        init(_ body: @escaping Body) { self.body = body }
    }

    /// - Parameters:
    ///   - pad: the pad to watch (a reference is kept for the token's life).
    ///   - mask: buffers, downstream events, flushes...
    ///   - body: runs on the pad's streaming thread; returns what GStreamer should do with the data.
    init?(on pad: GstRef<GstPad>, mask: GstPadProbeType, _ body: @escaping Body) {
        self.pad = pad
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        // The pad's object lock orders this thread's work before each call, and each call before the next and before
        // the destroy-notify; ThreadSanitizer is told so (bs_handoff_*, CBarscope.h).
        bs_handoff_publish(box)
        id = gst_pad_add_probe(
            pad.pointer, mask,
            { _, info, data in
                guard let info, let data else { return GST_PAD_PROBE_OK }
                bs_handoff_receive(data)
                defer { bs_handoff_publish(data) }
                return Unmanaged<Box>.fromOpaque(data).takeUnretainedValue().body(info)
            }, box,
            { data in
                guard let data else { return }
                bs_handoff_receive(data)
                Unmanaged<Box>.fromOpaque(data).release()
            })
        // A probe that was not installed does not call the destroy-notify either.
        if id == 0 {
            Unmanaged<Box>.fromOpaque(box).release()
            return nil
        }
    }

    /// Probes on `element`'s static pad `name`.
    convenience init?(
        on element: UnsafeMutablePointer<GstElement>, pad name: String, mask: GstPadProbeType, _ body: @escaping Body
    ) {
        guard let pad = GstRef<GstPad>.staticPad(element, name) else { return nil }
        self.init(on: pad, mask: mask, body)
    }

    func remove() {
        let first = removed.withLock { r -> Bool in
            defer { r = true }
            return !r
        }
        if first { gst_pad_remove_probe(pad.pointer, id) }
    }

    deinit { remove() }
}

extension GstPadProbeType {
    static func | (a: GstPadProbeType, b: GstPadProbeType) -> GstPadProbeType {
        GstPadProbeType(rawValue: a.rawValue | b.rawValue)
    }
}
