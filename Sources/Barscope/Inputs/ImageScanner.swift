import CBarscope
import CGStreamer
import CGStreamerApp
import Foundation

/// Scans still images (PNG, JPEG, anything GStreamer decodes), as `zbarimg` does, through the same ZBar stage as
/// video: `filesrc ! decodebin ! videoconvert ! appsink` (luma formats pass untouched). Both engines by default:
/// a still is worth the time.
public final class ImageScanner {
    private let reader: BarcodeReader

    /// - Parameter thorough: read an image where nothing is found again, transformed (within ``SecondPassBudget``); the fuzzer
    ///   turns it off to reach more inputs.
    public init(settings: ScannerSettings = ScannerSettings(), engine: Engine = .both, thorough: Bool = true) {
        reader = BarcodeReader(engine: engine, settings: settings, thorough: thorough)
    }

    /// How much work the second passes may do on one image (``SecondPassBudget``).
    public var secondPassBudget: SecondPassBudget {
        get { reader.secondPassBudget }
        set { reader.secondPassBudget = newValue }
    }

    /// What the second passes did on the last image scanned; nil when it got none.
    public var lastSecondPasses: SecondPassWork? { reader.lastSecondPasses }

    /// Scans one image file.
    /// - Throws: ``BarscopeError/badInput`` naming the file when it is missing or not an image.
    public func scan(path: String) throws -> [Detection] {
        try withLumaPlane(ofImageAt: path) { reader.read($0) }
    }

    /// Decodes one image file and lends its luma plane to `body`.
    func withLumaPlane<R>(ofImageAt path: String, _ body: (LumaImage) -> R) throws -> R {
        try checkReadableFile(path, kind: "an image")
        try ImageHeader.checkSize(ofFileAt: path)
        let pipeline = try Pipeline(
            launch: "filesrc name=src ! decodebin name=dec ! videoconvert name=conv ! appsink name=sink")
        guard let src = pipeline.child("src"), let sink = pipeline.child("sink"), let conv = pipeline.child("conv")
        else {
            throw BarscopeError.badInput("\(path): the image pipeline could not be made")
        }
        bs_set_string(src, "location", path)
        setProperty(sink, "caps", lumaCaps)
        let lumaProbe = negotiateLuma(converter: conv, sink: sink)
        defer { lumaProbe?.remove() }
        // Preroll gives us the first (for a still image, the only) frame without playing the pipeline.
        let change = pipeline.setState(GST_STATE_PAUSED)
        var state = GST_STATE_NULL
        var pending = GST_STATE_NULL
        let result =
            change == GST_STATE_CHANGE_FAILURE
            ? change : gst_element_get_state(pipeline.element, &state, &pending, 30 * 1_000_000_000)
        if result == GST_STATE_CHANGE_FAILURE || result == GST_STATE_CHANGE_ASYNC {
            var reason = "cannot be decoded"
            // The error that failed the state change may still be on its way to the bus.
            while let msg = pipeline.popMessage(timeoutNs: 1_000_000_000) {
                defer { gst_message_unref(msg) }
                if bs_message_type(msg) == GST_MESSAGE_ERROR {
                    let e = parseBusProblem(msg, warning: false)
                    reason = e.isTypeNotFound ? "not an image (\(e.message))" : e.message
                    break
                }
            }
            throw BarscopeError.badInput("\(path): \(reason)")
        }
        guard let sample = gst_app_sink_pull_preroll(bs_app_sink(sink)) else {
            throw BarscopeError.badInput("\(path): not an image (no picture in it)")
        }
        defer { gst_sample_unref(sample) }
        guard let result = Barscope.withLumaPlane(of: sample, { luma, _ in body(luma) }) else {
            throw BarscopeError.badInput("\(path): not an image (no picture in it)")
        }
        return result
    }
}
