import Barscope
import Foundation
import TestSupport
import Testing

/// The camera's caps choice. This machine has no camera: the caps strings below are a mock standing in for one,
/// written as `v4l2src` reports a device's source pad (`gst_pad_query_caps` in READY; `gst-device-monitor-1.0`
/// prints the same). They are parsed by GStreamer itself, then chosen from by the same pure function the run
/// uses. The real device path is exercised by the error tests (a missing device, a character device that is not
/// a camera) here and in CLITests.
@Suite(.suiteLimit) struct CameraCapsTests {
    /// A typical USB 2 webcam: YUY2 up to 1280x720 but slowly at that size, MJPG fast at every size.
    static let webcam = """
        image/jpeg, width=(int)1920, height=(int)1080, pixel-aspect-ratio=(fraction)1/1, framerate=(fraction){ 30/1, 15/1 }; \
        image/jpeg, width=(int)1280, height=(int)720, pixel-aspect-ratio=(fraction)1/1, framerate=(fraction){ 30/1, 15/1 }; \
        image/jpeg, width=(int)640, height=(int)480, pixel-aspect-ratio=(fraction)1/1, framerate=(fraction){ 30/1, 15/1 }; \
        video/x-raw, format=(string)YUY2, width=(int)1280, height=(int)720, pixel-aspect-ratio=(fraction)1/1, \
        colorimetry=(string)2:4:5:1, framerate=(fraction)10/1; \
        video/x-raw, format=(string)YUY2, width=(int)640, height=(int)480, pixel-aspect-ratio=(fraction)1/1, \
        colorimetry=(string)2:4:5:1, framerate=(fraction){ 30/1, 15/1 }; \
        video/x-h264, stream-format=(string)byte-stream, alignment=(string)au, width=(int)1920, height=(int)1080, \
        framerate=(fraction)30/1
        """

    /// A small camera that gives the same modes in both formats.
    static let simple = """
        video/x-raw, format=(string)YUY2, width=(int)1280, height=(int)720, framerate=(fraction)30/1; \
        video/x-raw, format=(string)YUY2, width=(int)640, height=(int)480, framerate=(fraction)30/1; \
        image/jpeg, width=(int)1280, height=(int)720, framerate=(fraction)30/1; \
        image/jpeg, width=(int)640, height=(int)480, framerate=(fraction)30/1
        """

    func choose(_ caps: String, _ request: CameraRequest) throws -> CameraChoice {
        try CameraChoice.choose(from: try CameraMode.modes(caps: caps), request: request, device: "/dev/video0")
    }

    @Test func parsesEveryRawAndJPEGMode() throws {
        let modes = try CameraMode.modes(caps: Self.webcam)
        // H.264 is left out (the graph decodes raw and MJPG); lists become one mode each.
        #expect(modes.map(\.format) == ["MJPG", "MJPG", "MJPG", "YUY2", "YUY2"])
        #expect(modes.first?.description == "MJPG 1920x1080 at 30/15 fps")
        #expect(modes.last?.description == "YUY2 640x480 at 30/15 fps")
    }

    /// No request: the largest size at the highest rate up to 30; MJPG only because nothing raw gives 1080p.
    @Test func bestWithoutARequest() throws {
        let best = try choose(Self.webcam, CameraRequest())
        #expect(best.description == "1920x1080 at 30 fps in MJPG")
        #expect(best.caps == "image/jpeg,width=1920,height=1080,framerate=30/1")
        #expect(best.needsJPEGDecoder)
        // Where raw gives the same size and rate, raw wins.
        let raw = try choose(Self.simple, CameraRequest())
        #expect(raw.caps == "video/x-raw,format=YUY2,width=1280,height=720,framerate=30/1")
        #expect(!raw.needsJPEGDecoder)
    }

    @Test func exactRequests() throws {
        // 640x480 at 30: YUY2 offers it, so no JPEG decoding.
        #expect(
            try choose(Self.webcam, CameraRequest(size: Size(width: 640, height: 480), fps: 30)).caps
                == "video/x-raw,format=YUY2,width=640,height=480,framerate=30/1")
        // 1280x720 at 30 only in MJPG; at 10 in YUY2.
        #expect(try choose(Self.webcam, CameraRequest(size: Size(width: 1280, height: 720), fps: 30)).format == "MJPG")
        #expect(try choose(Self.webcam, CameraRequest(size: Size(width: 1280, height: 720), fps: 10)).format == "YUY2")
        // A size alone: its highest rate up to 30.
        #expect(
            try choose(Self.webcam, CameraRequest(size: Size(width: 1280, height: 720))).description
                == "1280x720 at 30 fps in MJPG")
        // A format alone (V4L2's name YUYV is YUY2): the largest size it gives.
        #expect(try choose(Self.webcam, CameraRequest(format: "yuyv")).description == "1280x720 at 10 fps in YUY2")
        // A rate alone: the largest size at that rate.
        #expect(try choose(Self.webcam, CameraRequest(fps: 15)).description == "1920x1080 at 15 fps in MJPG")
    }

    /// What a device cannot give: one line naming the device, the request and what it does offer.
    @Test func impossibleRequestsNameWhatIsOffered() throws {
        #expect(
            throws: BarscopeError.badInput(
                "/dev/video0: cannot give 4000x3000 at 30 fps; it offers 1280x720 at 30, 640x480 at 30 fps (YUY2, MJPG)"
            )
        ) { try choose(Self.simple, CameraRequest(size: Size(width: 4000, height: 3000), fps: 30)) }
        #expect(
            throws: BarscopeError.badInput(
                "/dev/video0: cannot give 60 fps; it offers 1280x720 at 30, 640x480 at 30 fps (YUY2, MJPG)"
            )
        ) { try choose(Self.simple, CameraRequest(fps: 60)) }
        #expect(throws: BarscopeError.badInput("/dev/video0: cannot give NV12; it offers YUY2, MJPG")) {
            try choose(Self.simple, CameraRequest(format: "NV12"))
        }
        // Formats that differ are listed one by one.
        #expect(
            throws: BarscopeError.badInput(
                "/dev/video0: cannot give 1920x1080 in YUY2; it offers MJPG 1920x1080 at 30/15, 1280x720 at 30/15, "
                    + "640x480 at 30/15 fps; YUY2 1280x720 at 10, 640x480 at 30/15 fps"
            )
        ) { try choose(Self.webcam, CameraRequest(size: Size(width: 1920, height: 1080), format: "YUY2")) }
        // Nothing decodable at all (an H.264-only camera).
        #expect(throws: BarscopeError.self) {
            try choose("video/x-h264, width=(int)1920, height=(int)1080, framerate=(fraction)30/1", CameraRequest())
        }
    }

    /// Stepwise devices give ranges; NTSC rates are fractions and 30 takes 30000/1001.
    @Test func rangesAndFractionalRates() throws {
        let stepwise =
            "video/x-raw, format=(string)NV12, width=(int)[ 32, 3840 ], height=(int)[ 32, 2160 ], "
            + "framerate=(fraction)[ 1/1, 60/1 ]"
        #expect(
            try choose(stepwise, CameraRequest()).caps
                == "video/x-raw,format=NV12,width=3840,height=2160,framerate=30/1")
        #expect(
            try choose(stepwise, CameraRequest(size: Size(width: 1000, height: 600), fps: 60)).caps
                == "video/x-raw,format=NV12,width=1000,height=600,framerate=60/1")
        let ntsc = "video/x-raw, format=(string)UYVY, width=(int)720, height=(int)480, framerate=(fraction)30000/1001"
        let chosen = try choose(ntsc, CameraRequest(fps: 30))
        #expect(chosen.caps == "video/x-raw,format=UYVY,width=720,height=480,framerate=30000/1001")
        #expect(chosen.description == "720x480 at 29.97 fps in UYVY")
    }

    /// Real v4l2src, no camera needed: a missing device and a character device that is not a camera.
    @Test func devicesThatAreNotCameras() throws {
        #expect(throws: BarscopeError.badInput("/dev/video99: no such video device")) {
            try InputSource.parse("/dev/video99")
        }
        var c = RunConfiguration()
        c.input = try InputSource.parse("/dev/null")
        #expect(c.input == .device("/dev/null"))
        do {
            _ = try runScan(c)
            Issue.record("/dev/null was opened as a camera")
        } catch let e as BarscopeError {
            #expect(e.exitCode == 2)
            #expect(e.description.hasPrefix("/dev/null: not a camera barscope can open ("), "\(e)")
            #expect(e.description.contains("isn't a v4l2 driver"), "v4l2src's own reason is kept: \(e)")
        }
    }
}
