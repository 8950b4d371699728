import CBarscope
import CGStreamer
import Synchronization

/// Keeps the presentation timestamps that pass a pad strictly increasing, for an encoder that needs them so
/// (`x264enc`).
///
/// Why: a live RTSP stream whose H.264 has B-frames decodes with jittery timestamps (rtpjitterbuffer stamps by
/// arrival, and B-frames arrive in decode order), and `avdec_h264` clamps a decreasing one to the one before
/// ("decreasing timestamp"), so two frames share a timestamp. x264 cannot encode a repeated timestamp, x264enc then
/// pushes a buffer without one, and mp4mux stops the run ("Could not multiplex stream"). A repeated or earlier
/// timestamp is moved to just after the previous one (1 ms, well inside a frame interval); a missing one too.
/// Frames are never dropped. A new segment (a seek, a flush, a rebuilt source) starts the count again.
enum IncreasingTimestamps {
    /// The smallest step between two timestamps, in nanoseconds.
    static let stepNs: UInt64 = 1_000_000

    /// The previous timestamp on one pad (`UInt64.max`: none yet). Sendable: an atomic.
    final class Last: Sendable {
        let pts = Atomic<UInt64>(.max)
    }

    /// Adds the probe to `pad` (borrowed); it stays for the pad's life.
    static func install(on pad: UnsafeMutablePointer<GstPad>) {
        let mask = GST_PAD_PROBE_TYPE_BUFFER.rawValue | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM.rawValue
        let state = Unmanaged.passRetained(Last()).toOpaque()
        gst_pad_add_probe(pad, GstPadProbeType(rawValue: mask), restamp, state) { data in
            guard let data else { return }
            Unmanaged<Last>.fromOpaque(data).release()
        }
    }

    /// Decides a buffer's timestamp from the previous one: unchanged when it increases, else one step after.
    static func next(pts: UInt64?, after last: UInt64?) -> UInt64 {
        guard let last else { return pts ?? 0 }
        guard let pts, pts > last else { return last + stepNs }
        return pts
    }
}

/// The probe (the pad's streaming thread): a file-scope C function, so that it runs without actor isolation.
private func restamp(
    _ pad: UnsafeMutablePointer<GstPad>?, _ info: UnsafeMutablePointer<GstPadProbeInfo>?, _ data: gpointer?
) -> GstPadProbeReturn {
    guard let info, let data else { return GST_PAD_PROBE_OK }
    let last = Unmanaged<IncreasingTimestamps.Last>.fromOpaque(data).takeUnretainedValue()
    if let event = bs_probe_event(info) {
        if bs_event_type(event) == GST_EVENT_SEGMENT || bs_event_type(event) == GST_EVENT_FLUSH_STOP {
            last.pts.store(.max, ordering: .relaxed)
        }
        return GST_PAD_PROBE_OK
    }
    guard let buffer = bs_probe_buffer(info) else { return GST_PAD_PROBE_OK }
    let raw = UInt64(bs_buffer_pts(buffer))
    let previous = last.pts.load(ordering: .relaxed)
    let pts = IncreasingTimestamps.next(pts: raw == .max ? nil : raw, after: previous == .max ? nil : previous)
    if pts != raw, let writable = bs_probe_writable_buffer(info) {
        bs_buffer_set_pts(writable, UInt(pts))
    }
    last.pts.store(pts, ordering: .relaxed)
    return GST_PAD_PROBE_OK
}
