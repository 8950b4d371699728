import CBarscope
import CGStreamer
import CGStreamerApp

/// The scanner branch's end: appsink's caps and queueing (files: frame-accurate and bounded; live: the newest
/// frame only), and its callbacks into the scan stage, which they hold until appsink lets them go.
enum AppSinkWiring {
    static func configure(
        _ scan: UnsafeMutablePointer<GstElement>, queue scanq: UnsafeMutablePointer<GstElement>, live: Bool,
        stage: ScanStage, ledger: FrameLedger
    ) {
        setProperty(scan, "caps", lumaCaps)
        bs_set_bool(scan, "sync", 0)
        bs_set_bool(scan, "enable-last-sample", 0)
        if live {
            // Live: scanning never slows the video; the scanner takes the newest frames (its lane in the pool drops the
            // older: handing a frame over never waits). Three in this queue, so that a moment without the CPU for its
            // thread (the crop and the luma conversion run there) drops nothing: with one, 4 live 1080p streams on 2
            // cores lost 0 to 3 frames a minute each here.
            setProperty(scanq, "leaky", "downstream")
            bs_set_uint(scanq, "max-size-buffers", 3)
            bs_set_uint(scanq, "max-size-bytes", 0)
            bs_set_uint64(scanq, "max-size-time", 0)
            bs_set_uint(scan, "max-buffers", 1)
            bs_set_bool(scan, "drop", 1)
        } else {
            // Files: frame-accurate, nothing dropped; short bounded queues (appsink would otherwise hold the file),
            // so that a frame's latency is its scan, not its wait behind a second of others.
            bs_set_uint(scanq, "max-size-buffers", 2)
            bs_set_uint(scanq, "max-size-bytes", 0)
            bs_set_uint64(scanq, "max-size-time", 0)
            bs_set_uint(scan, "max-buffers", 2)
            bs_set_bool(scan, "drop", 0)
        }
        final class Target: Sendable {
            let stage: ScanStage
            let ledger: FrameLedger
            init(_ stage: ScanStage, _ ledger: FrameLedger) {
                self.stage = stage
                self.ledger = ledger
            }
        }
        var callbacks = GstAppSinkCallbacks()
        callbacks.new_sample = { sink, data in
            guard let sink, let data, let sample = gst_app_sink_pull_sample(sink) else { return GST_FLOW_OK }
            bs_handoff_receive(data)
            defer { bs_handoff_publish(data) }
            Unmanaged<Target>.fromOpaque(data).takeUnretainedValue().stage.submit(sample, preroll: false)
            return GST_FLOW_OK
        }
        // The first frame is scanned at preroll, so that sinks waiting for its overlay (a window, a muxer) can
        // preroll too; appsink then renders that same buffer again, which `submit` recognises and skips.
        callbacks.new_preroll = { sink, data in
            guard let sink, let data, let sample = gst_app_sink_pull_preroll(sink) else { return GST_FLOW_OK }
            bs_handoff_receive(data)
            defer { bs_handoff_publish(data) }
            Unmanaged<Target>.fromOpaque(data).takeUnretainedValue().stage.submit(sample, preroll: true)
            return GST_FLOW_OK
        }
        callbacks.eos = { _, data in
            guard let data else { return }
            bs_handoff_receive(data)
            defer { bs_handoff_publish(data) }
            let target = Unmanaged<Target>.fromOpaque(data).takeUnretainedValue()
            // Every frame's results reach the overlay before it is told that no more will come.
            target.stage.waitIdle()
            target.ledger.end()
        }
        // appsink's object lock orders this thread's work before each callback, and each callback before the next
        // and before the destroy-notify; ThreadSanitizer is told so (bs_handoff_*, CBarscope.h).
        let target = Unmanaged.passRetained(Target(stage, ledger)).toOpaque()
        bs_handoff_publish(target)
        gst_app_sink_set_callbacks(bs_app_sink(scan), &callbacks, target) { data in
            guard let data else { return }
            bs_handoff_receive(data)
            Unmanaged<Target>.fromOpaque(data).release()
        }
    }
}
