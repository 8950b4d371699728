import CBarscope
import CGStreamer
import CGStreamerApp
import Foundation

/// The newest annotated frame as JPEG, for whoever watches (`barscope serve`'s `frame.jpg` and MJPEG stream).
///
/// Frames are encoded only while someone watches: a probe at the preview queue's entrance drops every frame
/// otherwise, so an unwatched instance pays nothing for it. When nothing else takes the annotated frames (no
/// recording, window, RTSP), the probe is at the overlay branch's entrance: an unwatched frame is not converted
/// or drawn either. One tap belongs to a controller and outlives its runs
/// (a restart feeds the same tap).
///
/// Sendable: its state is behind a condition's lock.
public final class PreviewTap: @unchecked Sendable {
    private let condition = CountedCondition()
    private var jpeg: [UInt8]? = nil
    private var generation = 0
    private var watchers = 0
    private var wantedUntil = ContinuousClock.now

    public init() {}

    /// Someone streams the frames (MJPEG) until `unwatch()`.
    public func watch() { locked { watchers += 1 } }
    public func unwatch() { locked { watchers = max(0, watchers - 1) } }

    /// Frames are wanted for the next `seconds` (one `frame.jpg` request).
    public func want(for seconds: Double) {
        let until = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        locked { wantedUntil = max(wantedUntil, until) }
    }

    var wanted: Bool { locked { watchers > 0 || ContinuousClock.now < wantedUntil } }

    /// The newest frame and its number (nil before any).
    public var latest: (jpeg: [UInt8], generation: Int)? { locked { jpeg.map { ($0, generation) } } }

    /// Waits up to `timeout` seconds for a frame newer than `generation`.
    public func next(after generation: Int, timeout: Double) -> (jpeg: [UInt8], generation: Int)? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while self.generation <= generation {
            if !condition.wait(until: deadline) { break }
        }
        guard self.generation > generation, let jpeg else { return nil }
        return (jpeg, self.generation)
    }

    private func put(_ bytes: [UInt8]) {
        condition.lock()
        jpeg = bytes
        generation += 1
        condition.broadcast()
        condition.unlock()
    }

    private func locked<R>(_ body: () -> R) -> R {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    /// Connects to a run's preview branch: the gate at its queue and the appsink at its end.
    /// - Parameter wholeBranch: the run's ledger when the preview is the overlay's only taker: the gate is then at
    ///   the overlay branch's queue, and a frame it drops is passed in the ledger as drawn.
    /// - Returns: the gate's probe, which the run removes when it ends.
    func attach(_ pipeline: Pipeline, wholeBranch ledger: FrameLedger?) -> PadProbe? {
        guard let queue = pipeline.child(ledger == nil ? "previewq" : "drawq"), let sink = pipeline.child("preview")
        else { return nil }
        let gate = PadProbe(on: queue, pad: "sink", mask: GST_PAD_PROBE_TYPE_BUFFER) { [weak self] info in
            if self?.wanted == true { return GST_PAD_PROBE_OK }
            if let ledger, let buffer = bs_probe_buffer(info) {
                let n = bs_buffer_frame_number(buffer)
                if n >= 0 { ledger.notDrawn(Int(n)) }
            }
            return GST_PAD_PROBE_DROP
        }
        var callbacks = GstAppSinkCallbacks()
        callbacks.new_sample = { sink, data in
            guard let sink, let data, let sample = gst_app_sink_pull_sample(sink) else { return GST_FLOW_OK }
            defer { gst_sample_unref(sample) }
            guard let buffer = gst_sample_get_buffer(sample) else { return GST_FLOW_OK }
            var map = GstMapInfo()
            guard gst_buffer_map(buffer, &map, GST_MAP_READ) != 0 else { return GST_FLOW_OK }
            let bytes = [UInt8](UnsafeBufferPointer(start: map.data, count: Int(map.size)))
            gst_buffer_unmap(buffer, &map)
            Unmanaged<PreviewTap>.fromOpaque(data).takeUnretainedValue().put(bytes)
            return GST_FLOW_OK
        }
        gst_app_sink_set_callbacks(bs_app_sink(sink), &callbacks, Unmanaged.passRetained(self).toOpaque()) { data in
            if let data { Unmanaged<PreviewTap>.fromOpaque(data).release() }
        }
        return gate
    }
}
