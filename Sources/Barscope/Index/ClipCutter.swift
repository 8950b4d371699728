import CBarscope
import CGStreamer
import CGStreamerPbutils
import Foundation

/// The moment of a sighting as an MP4 of its own, cut from its recording at keyframes, without re-encoding:
///
///     filesrc ! parsebin ! h264parse ! mp4mux ! filesink     (a seek to [from, to], key unit, snapped before)
///
/// A moment that spans segments of a recording is cut from them joined (`splitmuxsrc`, which plays a recording's
/// segments as one timeline) in place of `filesrc ! parsebin`.
///
/// The seek is made once the graph is linked (the first buffer reaches the parser); until its flush has passed, a
/// probe after the parser drops what comes (the file's first frames), so the muxer sees only the moment.
public enum ClipCutter {
    /// Cuts `[from, to]` seconds of `recording` into `output` (an MP4).
    /// - Returns: where the clip's time 0 is in the recording, in seconds (`from`, or 0: the clip holds the frames
    ///   from the keyframe before it, which a player decodes and does not show).
    /// - Throws: ``BarscopeError/pipeline`` when the recording cannot be cut (not H.264, damaged), or nothing came.
    public static func cut(_ recording: String, from: Double, to: Double, into output: String) throws -> Double {
        try cut([recording], from: from, to: to, into: output)
    }

    /// Cuts `[from, to]` seconds of consecutive segments of one recording, joined (times count from the first
    /// segment's start), into `output`.
    public static func cut(_ segments: [String], from: Double, to: Double, into output: String) throws -> Double {
        guard let recording = segments.first else { throw failure("no recording to cut") }
        // splitmuxsrc takes its files by a pattern: links to the segments, in order, in a folder of their own.
        var joined: String? = nil
        if segments.count > 1 {
            let folder = NSTemporaryDirectory() + "barscope-segments-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let ext = (recording as NSString).pathExtension
            for (i, s) in segments.enumerated() {
                try FileManager.default.createSymbolicLink(
                    atPath: folder + String(format: "/part-%05d.", i) + ext, withDestinationPath: s)
            }
            joined = folder
        }
        defer { if let joined { try? FileManager.default.removeItem(atPath: joined) } }
        let source = joined == nil ? "filesrc name=src ! parsebin" : "splitmuxsrc name=src"
        let pipeline = try Pipeline(
            launch: "\(source) ! h264parse name=parse ! mp4mux name=mux ! filesink name=sink")
        guard let src = pipeline.child("src"), let sink = pipeline.child("sink"), let parse = pipeline.child("parse")
        else { throw failure("the clip's graph has no source, parser or sink") }
        let ext = (recording as NSString).pathExtension
        setProperty(src, "location", joined.map { "\($0)/part-*.\(ext)" } ?? recording)
        setProperty(sink, "location", output)

        // 0: before the seek (dropped; the first buffer says the graph is linked); 1: seek sent, its flush not yet
        // through (dropped); 2: the moment (passed, its first time kept).
        let phase = Locked(0)
        let linked = DispatchSemaphore(value: 0)
        let passed = Locked(false)
        // The moment's segment: its start is the clip's time 0 (the muxer counts from it; frames of the keyframe's
        // group before it are kept only to decode from).
        let segmentStart = Locked<UInt64?>(nil)
        let mask = GstPadProbeType(
            GST_PAD_PROBE_TYPE_BUFFER.rawValue | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM.rawValue
                | GST_PAD_PROBE_TYPE_EVENT_FLUSH.rawValue)
        let probe = PadProbe(on: parse, pad: "src", mask: mask) { info in
            if bs_probe_buffer(info) != nil {
                let now = phase.withLock { p -> Int in
                    if p == 0 { linked.signal() }
                    return p
                }
                guard now == 2 else { return GST_PAD_PROBE_DROP }
                passed.withLock { $0 = true }
                return GST_PAD_PROBE_OK
            }
            guard let event = bs_probe_event_any(info) else { return GST_PAD_PROBE_OK }
            let type = bs_event_type(event)
            if type == GST_EVENT_FLUSH_STOP { phase.withLock { if $0 == 1 { $0 = 2 } } }
            let passing = phase.withLock { $0 == 2 }
            if passing && type == GST_EVENT_SEGMENT {
                var segment: UnsafePointer<GstSegment>? = nil
                gst_event_parse_segment(event, &segment)
                // The first after the seek: a joined recording's later segments start segments of their own.
                // Its start in stream time (splitmuxsrc's buffers carry the recording's own offset).
                if let segment { segmentStart.withLock { $0 = $0 ?? UInt64(segment.pointee.time) } }
            }
            // Before the moment, the file's own segment and end are not the muxer's.
            if !passing && (type == GST_EVENT_SEGMENT || type == GST_EVENT_EOS) { return GST_PAD_PROBE_DROP }
            return GST_PAD_PROBE_OK
        }
        guard let probe else { throw failure("cannot watch the parser") }
        defer { probe.remove() }

        pipeline.setState(GST_STATE_PLAYING)
        defer { pipeline.setState(GST_STATE_NULL) }
        let deadline = ContinuousClock.now + .seconds(60)
        // Linked: the first frame reached the parser (or an error says why not).
        while linked.wait(timeout: .now() + 0.1) == .timedOut {
            if let problem = try busProblem(pipeline) { throw problem }
            if ContinuousClock.now > deadline { throw failure("\(recording): no video within 60 s") }
        }
        phase.withLock { $0 = 1 }
        // splitmuxsrc moves a key-unit seek's segment back to the keyframe (the clip would start there); without
        // the flag it starts its segment at the moment and sends from the keyframe before it, as qtdemux does.
        let flags = GstSeekFlags(
            GST_SEEK_FLAG_FLUSH.rawValue
                | (joined == nil ? GST_SEEK_FLAG_KEY_UNIT.rawValue | GST_SEEK_FLAG_SNAP_BEFORE.rawValue : 0))
        let ns = { (s: Double) in gint64(max(0, s) * 1e9) }
        guard
            gst_element_seek(
                pipeline.element, 1.0, GST_FORMAT_TIME, flags, GST_SEEK_TYPE_SET, ns(from), GST_SEEK_TYPE_SET, ns(to))
                != 0
        else { throw failure("\(recording): cannot seek to \(from) s") }
        while ContinuousClock.now < deadline {
            guard let msg = pipeline.popMessage(timeoutNs: 100_000_000) else { continue }
            defer { gst_message_unref(msg) }
            switch bs_message_type(msg) {
            case GST_MESSAGE_EOS:
                guard passed.withLock({ $0 }) else { throw failure("\(recording): nothing in the moment") }
                return Double(segmentStart.withLock { $0 } ?? 0) / 1e9
            case GST_MESSAGE_ERROR: throw BarscopeError.pipeline(parseBusProblem(msg, warning: false))
            default: continue
            }
        }
        throw failure("\(recording): the clip was not finished within 60 s")
    }

    /// A media file's length in seconds (GStreamer's discoverer), nil when it cannot be read.
    public static func duration(_ path: String) -> Double? {
        ArchiveFile.discovered(path) { info -> Double? in
            let ns = gst_discoverer_info_get_duration(info)
            return ns == UInt64.max ? nil : Double(ns) / 1e9
        }
    }

    /// The segments of a recording that `[from, to]` (seconds in `segment`, a file named `NAME-00003.mp4` as
    /// `--segment` names them) reaches into, in order, and the time in them joined where `segment` starts. A file
    /// that is not a segment, or a moment inside its segment, is that file alone.
    public static func segments(around segment: String, from: Double, to: Double) -> (files: [String], shift: Double) {
        guard let m = segment.wholeMatch(of: /(.*)-(\d{5})\.(mp4|mkv)/), let n = Int(m.2) else { return ([segment], 0) }
        func file(_ k: Int) -> String? {
            let f = String(m.1) + String(format: "-%05d.", k) + String(m.3)
            return k >= 0 && FileManager.default.fileExists(atPath: f) ? f : nil
        }
        var files = [segment]
        var shift = 0.0
        // Back while the moment starts before the first file kept, forward while it ends past the last.
        var k = n - 1
        while from + shift < 0, let earlier = file(k), let length = duration(earlier) {
            files.insert(earlier, at: 0)
            shift += length
            k -= 1
        }
        var end = duration(segment) ?? .infinity
        k = n + 1
        while to > end, let later = file(k), let length = duration(later) {
            files.append(later)
            end += length
            k += 1
        }
        return (files, shift)
    }

    private static func busProblem(_ pipeline: Pipeline) throws -> BarscopeError? {
        guard let msg = pipeline.popMessage(timeoutNs: 0) else { return nil }
        defer { gst_message_unref(msg) }
        guard bs_message_type(msg) == GST_MESSAGE_ERROR else { return nil }
        return BarscopeError.pipeline(parseBusProblem(msg, warning: false))
    }

    private static func failure(_ message: String) -> BarscopeError {
        BarscopeError.pipeline(GStreamerError(domain: "barscope", code: 0, message: message))
    }
}
