import CBarscope
import CCairo
import CGStreamer
import Foundation
import Synchronization

/// The annotated branch of one run: cairooverlay's draw signal draws the viewfinder, mask, each code's box,
/// polygon and label, and the status line on the frame, with that frame's own results (files) or the newest (live),
/// and hands the snapshot of a frame on which codes appeared (`--snapshots`) to the run's snapshot writer.
///
/// The frame's number is read off its buffer by a probe on cairooverlay's sink pad, on the same streaming thread
/// that then calls draw (basetransform runs them back to back).
/// Sendable: `frame`, `renderer` and `styleGeneration` are touched by the overlay's streaming thread only.
final class OverlayStage: @unchecked Sendable {
    private let parts: RunParts
    private var renderer: OverlayRenderer
    private var styleGeneration: Int
    private var frame = -1
    private let timeouts = Atomic<Int>(0)
    private var probe: PadProbe? = nil
    private let snapshots: SnapshotWriter?

    init(_ parts: RunParts, snapshots: SnapshotWriter?) {
        self.parts = parts
        self.snapshots = snapshots
        let v = parts.settings.values
        renderer = OverlayRenderer(style: v.style)
        styleGeneration = v.styleGeneration
    }

    /// Connects to the pipeline's cairooverlay. The signal handler holds this stage; it is released with the element.
    func attach(to overlay: UnsafeMutablePointer<GstElement>) {
        probe = PadProbe(on: overlay, pad: "sink", mask: GST_PAD_PROBE_TYPE_BUFFER) { [weak self] info in
            if let self, let buffer = bs_probe_buffer(info) {
                let n = bs_buffer_frame_number(buffer)
                frame = n >= 0 ? Int(n) : -1
            }
            return GST_PAD_PROBE_OK
        }
        // GLib's signal lock orders this thread's work before each draw, and each draw before the next and before
        // the destroy-notify; ThreadSanitizer is told so (bs_handoff_*, CBarscope.h).
        let me = Unmanaged.passRetained(self).toOpaque()
        bs_handoff_publish(me)
        bs_connect_draw(
            overlay,
            { _, cr, _, _, data in
                guard let cr, let data else { return }
                bs_handoff_receive(data)
                defer { bs_handoff_publish(data) }
                Unmanaged<OverlayStage>.fromOpaque(data).takeUnretainedValue().draw(on: cr)
            }, me,
            { data, _ in
                guard let data else { return }
                bs_handoff_receive(data)
                Unmanaged<OverlayStage>.fromOpaque(data).release()
            })
    }

    /// cairooverlay's draw signal (the overlay branch's streaming thread).
    private func draw(on cr: OpaquePointer) {
        let (found, stamp, snapshot) = parts.ledger.forDrawing(frame, timeout: 10)
        guard let size = stamp?.frame else { return }
        if found == nil, timeouts.add(1, ordering: .relaxed).oldValue == 0 {
            parts.emit(
                .warning(
                    message: "the scanner fell 10 s behind the overlay; drawing without results", source: "overlay"))
        }
        let shown = found ?? []
        let drawnFrames = parts.metrics.drawn.add(1, ordering: .relaxed).newValue
        let seconds = Date().timeIntervalSince(parts.metrics.started)
        let status = String(
            format: "barscope  frame %d  ·  %d in view  ·  %d seen  ·  %.1f frames/s", drawnFrames - 1, shown.count,
            parts.metrics.codes, seconds > 0 ? Double(drawnFrames) / seconds : 0)
        if parts.settings.styleGeneration != styleGeneration {
            let v = parts.settings.values
            styleGeneration = v.styleGeneration
            renderer = OverlayRenderer(style: v.style)
        }
        renderer.draw(
            on: cr, frame: size, viewfinder: stamp?.region, secondary: stamp?.secondary, detections: shown,
            status: status)
        let cycle = parts.cycles.display
        renderer.drawCycle(cr, frame: size, open: cycle.open, label: cycle.label, last: cycle.last)
        if let due = snapshot, let snapshots, let surface = cairo_get_target(cr) {
            cairo_surface_flush(surface)
            snapshots.submit(surface, due: due)
        }
    }
}
