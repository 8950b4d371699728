/// One code found in one frame, in full-frame pixel coordinates whatever the crop.
public struct Detection: Hashable, Sendable {
    /// ZBar's symbology name, as the stock GStreamer `zbar` element reports it: `QR-Code`, `EAN-13`, `CODE-128`.
    public var type: String
    /// The decoded text (bytes that are not UTF-8 are replaced).
    public var data: String
    /// ZBar's quality: for 1D codes the number of scan lines that agreed.
    public var quality: Int
    /// Corners: ZBar's four for 2D codes; for 1D codes the tightest box around ZBar's scan-line hits.
    /// Ordered top-left, bottom-left, bottom-right, top-right when there are four.
    public var polygon: [Point]
    public var bounds: Bounds
    /// Inside the viewfinder region (always true when the viewfinder is off: the whole frame is the region).
    public var inViewfinder: Bool
    /// The payload's bytes when they are not text (a binary QR payload, bytes that are not UTF-8): events carry
    /// them as base64 with `"encoding":"binary"`. Nil when `data` is the payload.
    public var binary: [UInt8]?
    /// Which way ZBar read it (its `zbar_orientation_t`), nil when ZBar did not say (zxing-cpp's reads).
    public var orientation: Orientation? = nil
    public enum Orientation: Int8, Sendable {
        case up = 0
        case right, down, left
    }
    /// zbarimg's name for the orientation: UP, RIGHT, DOWN, LEFT or UNKNOWN.
    public var orientationName: String {
        switch orientation {
        case .up: "UP"
        case .right: "RIGHT"
        case .down: "DOWN"
        case .left: "LEFT"
        case nil: "UNKNOWN"
        }
    }
    /// The engine that read it (`zbar`, `zxing`, or `both` when they agreed).
    public var engine: String = "zbar"
    /// One part of a message split over several codes (QR structured append): its position, the count, the
    /// parity. Nil for a code that stands alone.
    public var sequence: StructuredAppend? = nil
    /// 1D codes: the box's length across the bars (0 when no box could be made), and whether the code ran out of
    /// the scanned image before its quiet zone; nil and false when the engine does not say. For plausibility checks.
    var lengthAcrossBars: Double? = nil
    /// 1D codes read by ZBar: the unit direction across the bars (tracked mode rescans along it only).
    var acrossBars: Point? = nil
    var runsOffImage = false
    /// ZBar read this as one part of a structured append, but could not say which (it does not expose the
    /// header): zxing-cpp is asked (BarcodeReader).
    var sequencePart = false

    public init(type: String, data: String, quality: Int, polygon: [Point], inViewfinder: Bool = true) {
        self.type = type
        self.data = data
        self.quality = quality
        self.polygon = polygon
        self.bounds = Bounds(enclosing: polygon)
        self.inViewfinder = inViewfinder
    }

    /// Centre of the polygon, used by the tracker.
    public var center: Point {
        guard !polygon.isEmpty else { return bounds.center }
        let n = Double(polygon.count)
        return Point(polygon.map(\.x).reduce(0, +) / n, polygon.map(\.y).reduce(0, +) / n)
    }
}
