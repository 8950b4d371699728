import TestSupport
import Testing

@testable import Barscope

/// One model gives the launch description and the elements it needs: they cannot drift apart.
@Suite(.suiteLimit)
struct GraphPlanTests {
    @Test func factoriesAreReadOffTheDescription() throws {
        var c = RunConfiguration()
        c.input = .uri("file:///data/clip.mp4", display: "clip.mp4")
        c.recording = try Recording(path: "out.mkv")
        c.display = true
        let plan = GraphPlan.scanGraph(c)
        for f in [
            "uridecodebin", "tee", "queue", "videocrop", "videoconvert", "appsink", "cairooverlay", "x264enc",
            "h264parse", "matroskamux", "filesink", "autovideosink",
        ] {
            #expect(plan.factories.contains(f), "\(f) in \(plan.factories)")
        }
        // Caps and pad references are not factories.
        #expect(!plan.factories.contains { $0.contains("/") || $0.hasSuffix(".") })
        #expect(!plan.factories.contains("mp4mux") && !plan.factories.contains("splitmuxsink"))
        // Every factory is named in the description, except those made by code.
        for f in plan.factories { #expect(plan.description.contains(f), "\(f)") }
    }

    @Test func segmentsAndRTSPNeedWhatCodeMakes() throws {
        var c = RunConfiguration()
        c.recording = try Recording(path: "out.mp4", segmentSeconds: 60)
        c.serveRTSP = "127.0.0.1:0/x"
        let plan = GraphPlan.scanGraph(c)
        for f in ["appsrc", "splitmuxsink", "mp4mux", "filesink", "intervideosink", "intervideosrc", "rtph264pay"] {
            #expect(plan.factories.contains(f), "\(f)")
        }
    }

    @Test func aPipelineFilesFragmentIsNotRead() {
        var c = RunConfiguration()
        c.input = .launch("videotestsrc name=pattern ! video/x-raw,width=64,height=48", live: false)
        c.branches = [.init(name: "thumbs", annotated: true, launch: "jpegenc ! multifilesink name=thumbs")]
        let plan = GraphPlan.scanGraph(c)
        #expect(!plan.factories.contains("videotestsrc") && !plan.factories.contains("jpegenc"))
        #expect(plan.description.hasPrefix("videotestsrc name=pattern ! video/x-raw,width=64,height=48 ! tee name=t"))
        #expect(plan.description.contains("out. ! queue name=branch-thumbs ! jpegenc ! multifilesink name=thumbs"))
    }
}
