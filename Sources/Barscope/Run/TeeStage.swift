import CBarscope
import CGStreamer
import CGStreamerVideo

/// Where the stream splits: each frame gets its number (as a meta on the buffer, so that both branches key on it)
/// and its viewfinder stamp; new caps move the region to the new size. Then, on the scanner branch, videocrop is
/// given each buffer's own region just before it crops that buffer.
///
/// Sendable: `cropApplied` is touched by videocrop's streaming thread only; the elements are borrowed from the
/// pipeline, which outlives this stage.
final class TeeStage: @unchecked Sendable {
    private let timeline: RegionTimeline
    private let ledger: FrameLedger
    private let cycles: CycleDesk
    private let emit: @Sendable (Event) -> Void
    private let crop: UnsafeMutablePointer<GstElement>
    private let recordingCrop: UnsafeMutablePointer<GstElement>?
    /// A problem found on a streaming thread that must stop the run (the run loop is woken to read it).
    let fatal = Locked<BarscopeError?>(nil)
    private var cropApplied: PixelRect? = nil
    private var probes: [PadProbe] = []

    init(
        timeline: RegionTimeline, ledger: FrameLedger, crop: UnsafeMutablePointer<GstElement>,
        recordingCrop: UnsafeMutablePointer<GstElement>?, cycles: CycleDesk,
        emit: @escaping @Sendable (Event) -> Void
    ) {
        self.timeline = timeline
        self.ledger = ledger
        self.cycles = cycles
        self.crop = crop
        self.recordingCrop = recordingCrop
        self.emit = emit
    }

    /// Installs the probes: on the tee's sink pad (numbers, caps) and on videocrop's (the crop of each buffer).
    func attach(tee: UnsafeMutablePointer<GstElement>) {
        typealias Body = @Sendable (TeeStage, UnsafeMutablePointer<GstPadProbeInfo>) -> Void
        let watched: [(UnsafeMutablePointer<GstElement>, GstPadProbeType, Body)] = [
            (tee, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, { $0.observe($1) }),
            (crop, GST_PAD_PROBE_TYPE_BUFFER, { $0.cropFor($1) }),
        ]
        for (element, mask, body) in watched {
            let probe = PadProbe(on: element, pad: "sink", mask: mask) { [weak self] info in
                if let self { body(self, info) }
                return GST_PAD_PROBE_OK
            }
            if let probe { probes.append(probe) }
        }
    }

    func detach() {
        for p in probes { p.remove() }
    }

    /// The tee's sink pad (the upstream streaming thread).
    private func observe(_ info: UnsafeMutablePointer<GstPadProbeInfo>) {
        if bs_probe_buffer(info) != nil, let buffer = bs_probe_writable_buffer(info) {
            let raw = bs_buffer_pts(buffer)
            let pts: UInt64? = raw == .max ? nil : UInt64(raw)
            let (stamp, changed) = timeline.stampNext()
            let frame = ledger.admit(ptsNs: pts, stamp: stamp)
            bs_buffer_set_frame_number(buffer, guint64(frame))
            stamp.attach(to: buffer)
            // The frame's pixels, written upstream of here, reach the scanning workers through GStreamer's queues,
            // whose ordering ThreadSanitizer cannot see: said to it here and where a worker reads them.
            bs_handoff_publish(Unmanaged.passUnretained(ledger).toOpaque())
            // Cycle commands given since the last frame take effect at this one's stream time.
            cycles.stamp(frame: frame)
            if changed { emit(.viewfinder(frame: frame, ptsNs: pts, region: stamp.region)) }
            return
        }
        guard let event = bs_probe_event(info), bs_event_type(event) == GST_EVENT_CAPS else { return }
        var caps: UnsafeMutablePointer<GstCaps>? = nil
        gst_event_parse_caps(event, &caps)
        var videoInfo = GstVideoInfo()
        guard let caps, gst_video_info_from_caps(&videoInfo, caps) != 0 else { return }
        let size = Size(width: Int(videoInfo.width), height: Int(videoInfo.height))
        // New caps (the first, or a camera that switched resolution): the region follows the new size at once
        // (videocrop is set per buffer, from its own frame's stamp: buffers of the old size may still be queued).
        guard timeline.setFrame(size) != nil else {
            fatal.withLock { $0 = .noRegion(size, timeline.viewfinder) }
            Pipeline.wake(crop)
            return
        }
        if let recordingCrop {
            bs_set_int(recordingCrop, "right", Int32(size.width % 2))
            bs_set_int(recordingCrop, "bottom", Int32(size.height % 2))
        }
    }

    /// videocrop's sink pad (the scan queue's thread): the buffer is cropped to the region stamped on its frame;
    /// basetransform renegotiates before transforming it, so the change takes effect on that very buffer.
    private func cropFor(_ info: UnsafeMutablePointer<GstPadProbeInfo>) {
        guard let buffer = bs_probe_buffer(info) else { return }
        guard let stamp = RegionTimeline.Stamp(buffer: buffer), let frame = stamp.frame else { return }
        let r = stamp.scanArea ?? PixelRect(x: 0, y: 0, width: frame.width, height: frame.height)
        // The right and bottom margins follow from the rectangle and the frame.
        let margins = PixelRect(x: r.x, y: r.y, width: frame.width - r.maxX, height: frame.height - r.maxY)
        guard cropApplied != margins else { return }
        cropApplied = margins
        bs_set_int(crop, "left", Int32(margins.x))
        bs_set_int(crop, "top", Int32(margins.y))
        bs_set_int(crop, "right", Int32(margins.width))
        bs_set_int(crop, "bottom", Int32(margins.height))
    }
}
