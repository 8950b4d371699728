import CBarscope
import CGStreamer
import Glibc

/// The annotated branch: the overlay, then a tee `out` to the recording, the window, the RTSP server and a pipeline
/// file's annotated branches.
enum OutputWiring {
    static func plan(_ c: RunConfiguration, into plan: inout GraphPlan) {
        plan.add(
            "t. ! queue name=drawq ! videoconvert ! video/x-raw,format=BGRx ! cairooverlay name=overlay ! tee name=out")
        if let r = c.recording {
            // reccrop trims an odd last column or row: x264 cannot encode 4:2:0 at an odd size (a 391 px wide label).
            var chain = "out. ! queue name=recq ! videocrop name=reccrop ! videoconvert ! video/x-raw,format=I420"
            chain += " ! x264enc name=enc ! h264parse"
            if r.segmentSeconds != nil {
                chain += " ! splitmuxsink name=rec"
                // splitmuxsink's muxer and sink are made by code (configureRecording).
                plan.need(r.muxer)
                plan.need("filesink")
            } else {
                // async=false: the encoder holds back frames until it has its lookahead, while the scanner is held
                // in preroll; a file sink that also waited for preroll would wait forever.
                chain += " ! \(r.muxer) name=mux ! filesink name=rec async=false"
            }
            plan.add(chain)
        }
        if c.serveRTSP != nil {
            // Live clients take the newest frames; the served media starts from the matching intervideosrc.
            plan.add("out. ! queue name=rtspq leaky=downstream max-size-buffers=2 ! intervideosink name=rtspout")
            for f in RTSPOut.factories { plan.need(f) }
        }
        for b in c.branches where b.annotated {
            plan.add("out. ! queue name=branch-\(b.name)")
            plan.addFragment("! \(b.launch)")
        }
        if c.preview != nil {
            // Newest frame only; frames are dropped at the queue's sink unless someone watches (PreviewTap).
            plan.add(
                "out. ! queue name=previewq leaky=downstream max-size-buffers=1 ! videoconvert ! jpegenc quality=80 "
                    + "! appsink name=preview max-buffers=1 drop=true sync=false async=false enable-last-sample=false")
        }
        if c.recording == nil && !c.display && c.serveRTSP == nil && c.preview == nil
            && !c.branches.contains(where: { $0.annotated })
        {
            // Drawn only for --snapshots: the frames end here.
            plan.add("out. ! fakesink sync=false async=false")
        }
        if c.display {
            plan.add(
                "out. ! queue name=winq leaky=downstream max-size-buffers=2 ! videoconvert ! autovideosink name=window")
        }
    }

    /// The recording's encoder, muxer and sink; the window's clock.
    static func configure(_ pipeline: Pipeline, _ c: RunConfiguration, live: Bool) {
        if let r = c.recording, let rec = pipeline.child("rec"), let enc = pipeline.child("enc") {
            if let seconds = r.segmentSeconds {
                bs_set_string(rec, "location", r.segmentPattern)
                bs_set_uint64(rec, "max-size-time", UInt(seconds) * 1_000_000_000)
                bs_set_bool(rec, "send-keyframe-requests", 1)
                // splitmuxsink holds the pipeline's preroll until it has a whole first GOP, which cannot come while
                // the scanner is held in preroll: handling its own state changes, it no longer holds the others (a
                // segmented recording of a file stalled 30 s on the overlay's timeouts before).
                bs_set_bool(rec, "async-handling", 1)
                // Our own muxer and sink: the muxer crash-tolerant, the sink not waiting for preroll (see above).
                if let mux = gst_element_factory_make(r.muxer, nil),
                    let sink = gst_element_factory_make("filesink", nil)
                {
                    if r.container == .mp4 { bs_set_uint(mux, "fragment-duration", 1000) }
                    bs_set_bool(sink, "async", 0)
                    bs_set_pointer_object(rec, "muxer", mux)
                    bs_set_pointer_object(rec, "sink", sink)
                }
            } else {
                bs_set_string(rec, "location", r.path)
                if r.container == .mp4, let mux = pipeline.child("mux") { bs_set_uint(mux, "fragment-duration", 1000) }
            }
            setProperty(enc, "speed-preset", live ? "ultrafast" : "superfast")
            if live { setProperty(enc, "tune", "zerolatency") }
            setProperty(enc, "pass", "qual")
            bs_set_uint(enc, "quantizer", 21)
            bs_set_uint(enc, "key-int-max", 60)
            // No B-frames: fragmented MP4 dropped the two frames their reordering delays (75 in, 73 out).
            bs_set_uint(enc, "bframes", 0)
            // x264 needs increasing timestamps, which a live stream decoded from B-frames does not always give.
            if let pad = GstRef<GstPad>.staticPad(enc, "sink") { IncreasingTimestamps.install(on: pad.pointer) }
            if live, let queue = pipeline.child("recq") { encodeBelowTheScanner(queue) }
        }
        if c.display, let window = pipeline.child("window") { bs_set_bool(window, "sync", 1) }
    }

    /// How much less the live recording's encoding weighs than the scanning, in nice steps (Linux's scheduler gives
    /// a thread at +5 about a third of a +0 thread's share when they compete for a core).
    static let encoderNice: Int32 = 5

    /// A live recording's encoder gives way to the scanner when they compete for the cores: the recording queue's
    /// streaming thread lowers its own priority before its first event reaches x264enc, and the threads x264 starts
    /// when the caps come inherit it (a thread's nice value passes to the threads it creates). Events are the
    /// product, the recording their evidence; the queue absorbs what the encoder defers (a second of frames). (Its
    /// effect is not measured apart: 2 demo streams recording held with it, and in an earlier run without it.)
    static func encodeBelowTheScanner(_ queue: UnsafeMutablePointer<GstElement>) {
        guard let pad = gst_element_get_static_pad(queue, "src") else { return }
        defer { gst_object_unref(pad) }
        _ = gst_pad_add_probe(
            pad, GstPadProbeType(GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM.rawValue | GST_PAD_PROBE_TYPE_BUFFER.rawValue),
            { _, _, _ in
                // On Linux the calling thread's own priority (PRIO_PROCESS with a thread id), five steps below
                // what it was (lowering never needs privileges).
                let which = __priority_which_t(PRIO_PROCESS.rawValue)
                let thread = id_t(bs_thread_id())
                _ = setpriority(which, thread, getpriority(which, thread) + OutputWiring.encoderNice)
                return GST_PAD_PROBE_REMOVE
            }, nil, nil)
    }
}
