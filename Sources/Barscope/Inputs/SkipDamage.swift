import CBarscope
import CGStreamer
import Foundation

/// Goes on past a damaged stretch of a file whose demuxer gives up there.
///
/// Why: GStreamer 1.22's matroskademux, reading overwritten bytes as top-level elements, takes one of them for a huge
/// element, skips past the end of the file and ends the stream there without an error: a 10 s clip damaged at 4 s
/// scanned 4 s and said nothing. qtdemux and the decoders resynchronise by themselves; this is for a stream that ends
/// well before the file's duration. Its end of stream is held back where the decoded video enters our graph, and a
/// seek to the next key frame after it (flushing, so the demuxer and decoder start clean) is sent upstream from the bus
/// loop. The flush and the new segment stop at that pad: the segment's base is moved so that running time goes on from
/// the last frame, so the scanner, the overlay and the recording see one stream with a jump in its timestamps (the
/// stream's own), never a reset. A seek that brings nothing new tries further on, in growing steps; after
/// ``maxAttempts`` in a row, at the duration, or when nothing comes within ``stallSeconds``, the end of stream goes on.
final class SkipDamage: @unchecked Sendable {
    // Sendable: `state` is behind its lock; `segment` and `hasSegment` are the probe's streaming thread's only; the
    // rest is set once in init.
    struct State {
        /// End of the last frame, in stream time.
        var lastEnd: UInt64? = nil
        /// Between a held end of stream and the first frame the seek brings.
        var seeking = false
        var target: UInt64 = 0
        var seekSent: Date? = nil
        var failures = 0
        var attempts = 0
        var damagedFrom: UInt64? = nil
        var finished = false
    }

    static let maxAttempts = 6
    static let maxTotalAttempts = 32
    static let stallSeconds = 5.0
    /// A stream ending this close to the duration ended normally.
    static let endToleranceNs: UInt64 = 500_000_000
    static let firstStepNs: UInt64 = 500_000_000

    /// The pad where the decoded video enters our graph (owned).
    private let padRef: GstRef<GstPad>
    private var pad: UnsafeMutablePointer<GstPad> { padRef.pointer }
    private let name: String
    private let report: @Sendable (Event) -> Void
    private let state = Locked(State())
    /// The stream's current segment: the probe's streaming thread only (buffers and segments travel together).
    private var segment = GstSegment()
    private var hasSegment = false
    /// The message the probe posts so that the bus loop seeks (a streaming thread must not seek itself).
    static let messageName = "barscope-skip-damage"

    /// - Parameters:
    ///   - pad: the sink pad the source's decoded video is linked to (borrowed; a reference is kept).
    ///   - name: the input as messages name it (credentials hidden).
    init(pad: UnsafeMutablePointer<GstPad>, name: String, report: @escaping @Sendable (Event) -> Void) {
        padRef = GstRef(retaining: pad)
        self.name = name
        self.report = report
        let mask =
            GST_PAD_PROBE_TYPE_BUFFER.rawValue | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM.rawValue
            | GST_PAD_PROBE_TYPE_EVENT_FLUSH.rawValue
        // The pad's object lock orders this thread's work before each call; ThreadSanitizer is told so
        // (bs_handoff_*, CBarscope.h).
        let me = Unmanaged.passRetained(self).toOpaque()
        bs_handoff_publish(me)
        gst_pad_add_probe(
            pad, GstPadProbeType(rawValue: mask),
            { _, info, data in
                guard let info, let data else { return GST_PAD_PROBE_OK }
                bs_handoff_receive(data)
                defer { bs_handoff_publish(data) }
                return Unmanaged<SkipDamage>.fromOpaque(data).takeUnretainedValue().probe(info)
            }, me,
            { data in
                guard let data else { return }
                bs_handoff_receive(data)
                Unmanaged<SkipDamage>.fromOpaque(data).release()
            })
    }

    /// The probe (the pad's streaming thread).
    private func probe(_ info: UnsafeMutablePointer<GstPadProbeInfo>) -> GstPadProbeReturn {
        if let buffer = bs_probe_buffer(info) {
            // GST_CLOCK_TIME_NONE is .max.
            let pts = UInt64(bs_buffer_pts(buffer))
            guard pts != .max else { return GST_PAD_PROBE_OK }
            let duration = UInt64(bs_buffer_duration(buffer))
            let end = pts + (duration == .max ? 0 : duration)
            let (resumed, repeated) = state.withLock { s -> ((from: UInt64, to: UInt64)?, Bool) in
                // A seek that lands on frames already delivered (the key frame before the damage) is no progress.
                if s.seeking, let lastEnd = s.lastEnd, end <= lastEnd { return (nil, true) }
                var resumed: (UInt64, UInt64)? = nil
                if s.seeking {
                    s.seeking = false
                    s.failures = 0
                    resumed = (s.damagedFrom ?? 0, pts)
                    s.damagedFrom = nil
                }
                s.lastEnd = max(s.lastEnd ?? 0, end)
                return (resumed, false)
            }
            if repeated { return GST_PAD_PROBE_DROP }
            if let resumed {
                report(
                    .warning(
                        message: "\(name): damaged between \(Self.seconds(resumed.from)) and "
                            + "\(Self.seconds(resumed.to)); scanning goes on after it",
                        source: nil))
            }
            return GST_PAD_PROBE_OK
        }
        guard let event = bs_probe_event_any(info) else { return GST_PAD_PROBE_OK }
        switch bs_event_type(event) {
        case GST_EVENT_FLUSH_START, GST_EVENT_FLUSH_STOP:
            // Our own seek's flush resets the demuxer and the decoder, never the graph after them.
            return state.withLock { $0.seeking } ? GST_PAD_PROBE_DROP : GST_PAD_PROBE_OK
        case GST_EVENT_SEGMENT:
            var segmentPointer: UnsafePointer<GstSegment>? = nil
            gst_event_parse_segment(event, &segmentPointer)
            guard let segmentPointer else { return GST_PAD_PROBE_OK }
            var segment = segmentPointer.pointee
            let lastEnd = state.withLock { s in s.seeking ? s.lastEnd : nil }
            // Running time goes on from the last frame, as the segment before the damage placed it (rate 1, so
            // the new start maps to the base).
            var base: UInt64? = nil
            if let lastEnd, hasSegment, segment.format == GST_FORMAT_TIME {
                let running = UInt64(gst_segment_to_running_time(&self.segment, GST_FORMAT_TIME, UInt(lastEnd)))
                if running != .max { base = running }
            }
            if let base { segment.base = UInt(base) }
            self.segment = segment
            hasSegment = true
            if base != nil, let moved = gst_event_new_segment(&segment) {
                gst_event_set_seqnum(moved, gst_event_get_seqnum(event))
                bs_probe_replace_event(info, moved)
            }
            return GST_PAD_PROBE_OK
        case GST_EVENT_EOS:
            return holdEndOfStream() ? GST_PAD_PROBE_DROP : GST_PAD_PROBE_OK
        default:
            return GST_PAD_PROBE_OK
        }
    }

    /// Decides, at an end of stream, whether to seek past damage (true: the end is held back).
    private func holdEndOfStream() -> Bool {
        var duration: Int = -1
        let known = gst_pad_peer_query_duration(pad, GST_FORMAT_TIME, &duration) != 0 && duration > 0
        var endedEarly: (at: UInt64, of: UInt64)? = nil
        let hold = state.withLock { s -> Bool in
            // Not held: this end of stream goes on, and is the last.
            func pass(endedEarlyAt at: UInt64? = nil, of total: UInt64 = 0) -> Bool {
                if let at { endedEarly = (at, total) }
                s.finished = true
                s.seeking = false
                return false
            }
            guard !s.finished, known, let lastEnd = s.lastEnd else { return pass() }
            let total = UInt64(duration)
            if s.seeking { s.failures += 1 }  // the last seek brought nothing
            guard lastEnd + Self.endToleranceNs < total else { return pass() }
            let step = Self.firstStepNs << UInt64(s.failures)
            let target = max(lastEnd, s.seeking ? s.target : 0) + step
            guard s.failures < Self.maxAttempts, s.attempts < Self.maxTotalAttempts, target < total else {
                return pass(endedEarlyAt: lastEnd, of: total)
            }
            if !s.seeking { s.damagedFrom = lastEnd }
            s.seeking = true
            s.target = target
            s.attempts += 1
            s.seekSent = nil
            return true
        }
        if hold {
            if let parent = gst_pad_get_parent_element(pad) {
                if let message = gst_message_new_application(
                    bs_gst_object(parent), gst_structure_new_empty(Self.messageName))
                {
                    _ = gst_element_post_message(parent, message)
                }
                gst_object_unref(UnsafeMutableRawPointer(parent))
            }
        } else if let endedEarly {
            report(
                .warning(
                    message: "\(name): the video ends at \(Self.seconds(endedEarly.at)) of "
                        + "\(Self.seconds(endedEarly.of)) (damaged or cut short; nothing readable after it)",
                    source: nil))
        }
        return hold
    }

    /// Sends the seek the probe asked for (the bus loop's thread).
    func seek() {
        let target = state.withLock { s -> UInt64? in
            guard s.seeking, !s.finished else { return nil }
            s.seekSent = Date()
            return s.target
        }
        guard let target else { return }
        let flags = GST_SEEK_FLAG_FLUSH.rawValue | GST_SEEK_FLAG_KEY_UNIT.rawValue | GST_SEEK_FLAG_SNAP_AFTER.rawValue
        guard
            let seek = gst_event_new_seek(
                1.0, GST_FORMAT_TIME, GstSeekFlags(rawValue: flags), GST_SEEK_TYPE_SET, Int(target),
                GST_SEEK_TYPE_NONE, -1)
        else { return finish() }
        // An upstream event pushed from a sink pad goes to its peer: into the source bin, to its demuxer.
        if gst_pad_push_event(pad, seek) == 0 { finish() }
    }

    /// The run is being stopped (a signal, a stop request): its end of stream is not damage, and one held back
    /// while a seek was under way goes on at once.
    func stop() { finish() }

    /// When a seek under way counts as stalled (nil: none under way): the bus loop looks again then at the latest.
    var stallDeadline: Date? {
        state.withLock { s in
            s.seeking && !s.finished ? s.seekSent.map { $0.addingTimeInterval(Self.stallSeconds) } : nil
        }
    }

    /// Called by the bus loop: a seek that brought nothing for a while ends the stream.
    func checkStalled() {
        let stalled = state.withLock { s in
            s.seeking && !s.finished && s.seekSent.map { Date().timeIntervalSince($0) > Self.stallSeconds } == true
        }
        if stalled { finish() }
    }

    /// No more seeks; an end of stream held back (a seek under way) is sent on.
    private func finish() {
        let send = state.withLock { s -> Bool in
            defer {
                s.finished = true
                s.seeking = false
            }
            return s.seeking && !s.finished
        }
        if send, let eos = gst_event_new_eos() { _ = gst_pad_send_event(pad, eos) }
    }

    static func seconds(_ ns: UInt64) -> String { String(format: "%.1f s", Double(ns) / 1e9) }
}
