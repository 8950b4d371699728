import Foundation

/// Everything one run needs: the source, the region, the decoder, what to report and where the picture goes.
public struct RunConfiguration: Sendable {
    public var input: InputSource = .demo(DemoOptions())
    /// Cameras: the size, rate and format asked for (`--size`, `--fps`, `--format`); what is not asked for is
    /// chosen from what the device offers (``CameraChoice``).
    public var camera = CameraRequest()
    /// Still images: how many times the picture is repeated (`--frames`, 0 = until stopped) and at what rate
    /// (`--fps`). One frame by default: scanned once, recorded as a clip of one frame.
    public var imageFrames = 1
    public var imageFPS = 30
    /// RTSP sources: `tcp` or `udp` (nil: rtspsrc's default, UDP first then TCP), and the jitter buffer in ms.
    public var rtspTransport: String? = nil
    public var rtspLatencyMs: Int? = nil
    /// RTSP credentials given apart from the URI (`BARSCOPE_RTSP_USER` and `BARSCOPE_RTSP_PASSWORD` for the
    /// command line), so that the password is in no command line or file; set on rtspsrc as properties, never
    /// shown. Credentials in the URI win.
    public var rtspCredentials: RTSPCredentials? = nil
    /// Network sources: no frame for this many seconds is a fault (a stalled stream that never closes).
    public var watchdogSeconds: Double = 5
    public var viewfinder = Viewfinder()
    public var scanner = ScannerSettings()
    /// The decoding engine: ZBar alone by default on video (the fastest); zxing-cpp or both with `--engine`.
    public var engine = Engine.zbar
    /// Reads 1D codes too faint, small or blurred for ZBar where the frame has bars no read explained
    /// (`HardCodeReader`), at a cost docs/performance.md states: asked for (`--hard-codes on`), never by default. On a
    /// frame full of bars it cannot read it costs two thirds more CPU; a live source would spend its frame
    /// budget on it, and tracked mode is for speed.
    public var hardCodes = false
    /// One `detection` event per code per frame, instead of `appeared`/`lost` pairs.
    public var everyFrame = false
    /// Otherwise, how often a code is reported: each track, once per run, or again after some time.
    public var duplicates = DuplicatePolicy.everyTrack
    /// The annotated video, recorded (H.264 in fragmented MP4 or Matroska, whole or in segments).
    public var recording: Recording? = nil
    /// A window showing the annotated video.
    public var display = false
    public var style = OverlayStyle()
    /// Frames without a code after which a track is lost.
    public var lostAfterFrames = 15
    /// Frames a 1D read that one scan line made must be read in, at the same place, before it is reported
    /// (`tracking.confirm-frames`; 1 reports every read at once).
    public var confirmation = Tracker.Confirmation()
    /// Scanning threads, one ZBar scanner each (default: one per core).
    public var scanThreads = ProcessInfo.processInfo.activeProcessorCount
    /// Tracked mode: a full search only every `trackedInterval` frames; in between, only the
    /// regions around the codes last seen are rescanned. A new code is reported within `trackedInterval - 1`
    /// frames of its appearance.
    public var tracked = false
    public var trackedInterval = 4
    /// Tracked mode's searches read 1D codes at full resolution along every n-th row and column (ZBar's density):
    /// a 1D code is crossed by many such lines at any module size ZBar reads at all.
    public var trackedSearchLines = 4
    /// Tracked mode: the full-size read for 2D codes too small for half size (modules under 2 px) runs at every
    /// `trackedSmall2DEvery`-th search on the areas that changed (the search's dearest part): such a code that comes
    /// into view is found within that many searches, then tracked like any other. Over the whole frame it runs a band
    /// at a time (up to 4, each grown by 64 rows), at every other such search. 1D codes of any size are looked for at
    /// every search.
    public var trackedSmall2DEvery = 4
    /// Tracked mode: searches read only where the picture changed since the search before (and around the codes
    /// known), and the whole frame at every `trackedWholeSearchEvery`-th search (1: every search is whole). A code
    /// that comes into view changes the picture where it comes; one a gated search missed where nothing changes any
    /// more is found at the next whole search.
    public var trackedWholeSearchEvery = 8

    public init() {}

    /// Serve the annotated stream over RTSP: `HOST:PORT/PATH` (loopback unless a host is given).
    public var serveRTSP: String? = nil
    /// A folder where, for each new code, the annotated frame is saved as PNG.
    public var snapshotFolder: String? = nil
    /// Read cycles: how they open and close, what a good read is.
    public var cycles = CycleSettings()
    /// Brokers the events go to (`--publish`), the node's name, the spool.
    public var publish = PublishSettings()

    /// Extra branches from a pipeline file (`[branch NAME]`): gst-launch fragments fed with the raw frames or the
    /// annotated ones.
    public var branches: [Branch] = []
    /// Properties set on named elements of the graph once it is built (`[properties] element.property = value`):
    /// how user values reach a pipeline file's fragments, never pasted into a launch string.
    public var properties: [ElementProperty] = []

    /// The annotated frames as JPEG, encoded only while someone watches (`barscope serve`'s frame.jpg and MJPEG).
    public var preview: PreviewTap? = nil
    /// Whether the overlay branch exists at all.
    var draws: Bool { preview != nil || drawsForOutputs }
    /// Whether something other than the preview takes the annotated frames: if not, a frame nobody watches is not
    /// drawn either (the preview's gate is at the overlay branch's entrance).
    var drawsForOutputs: Bool {
        recording != nil || display || snapshotFolder != nil || serveRTSP != nil || branches.contains { $0.annotated }
    }
}

/// A user name and password for an RTSP source. Its description never shows the password.
public struct RTSPCredentials: Sendable, Equatable, CustomStringConvertible {
    public var user: String
    public var password: String
    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }
    /// From `BARSCOPE_RTSP_USER` and `BARSCOPE_RTSP_PASSWORD` (nil when the user is not set).
    public static func fromEnvironment(_ env: [String: String] = ProcessInfo.processInfo.environment)
        -> RTSPCredentials?
    {
        guard let user = env["BARSCOPE_RTSP_USER"], !user.isEmpty else { return nil }
        return RTSPCredentials(user: user, password: env["BARSCOPE_RTSP_PASSWORD"] ?? "")
    }
    public var description: String { "\(user):***" }
}

/// A branch of the graph given as a gst-launch fragment.
public struct Branch: Sendable, Equatable {
    public var name: String
    /// Fed with the annotated frames (after the overlay) rather than the raw ones (at the tee).
    public var annotated: Bool
    public var launch: String
    public init(name: String, annotated: Bool, launch: String) {
        self.name = name
        self.annotated = annotated
        self.launch = launch
    }
}

/// One `element.property = value`, and where it was written (for errors).
public struct ElementProperty: Sendable, Equatable {
    public var element: String
    public var property: String
    public var value: String
    public var origin: String
    public init(element: String, property: String, value: String, origin: String) {
        self.element = element
        self.property = property
        self.value = value
        self.origin = origin
    }
}

/// What a finished run measured.
public struct RunSummary: Sendable {
    /// Frames scanned.
    public var frames: Int
    /// Frames that reached the tee (all of them recorded or shown): scanned + dropped.
    public var framesIn: Int
    /// Frames never scanned: those a live scanner dropped to stay current, or those a stopped file's run had not
    /// reached (a file's scanner waits, and drops none).
    public var dropped: Int
    /// From a frame's arrival at the tee to its results, in milliseconds (50th and 95th percentile).
    public var latencyMs: (p50: Double, p95: Double)?
    /// Distinct tracks started (codes seen).
    public var codes: Int
    public var seconds: Double
    /// True when a signal stopped the run.
    public var interrupted: Bool
    public var framesPerSecond: Double { seconds > 0 ? Double(frames) / seconds : 0 }
}

extension RunConfiguration {
    /// Seconds a frame when the source's rate is known (the demo's), for the sightings index's times.
    public static func frameSeconds(_ input: InputSource) -> Double? {
        if case .demo(let o) = input { return 1 / Double(o.fps) }
        return nil
    }
}
