/// What the user asked of a camera (`--size`, `--fps`, `--format`); nil = the best the device offers.
public struct CameraRequest: Sendable, Equatable {
    public var size: Size?
    public var fps: Int?
    /// A pixel format: a raw one (`YUY2`, `NV12`, ...) or `MJPG`, as V4L2 tools name them.
    public var format: String?

    public init(size: Size? = nil, fps: Int? = nil, format: String? = nil) {
        self.size = size
        self.fps = fps
        self.format = format.map(Self.normalizedFormat)
    }

    /// V4L2's and GStreamer's names for the same formats: YUYV is YUY2, MJPEG and JPEG are MJPG.
    public static func normalizedFormat(_ text: String) -> String {
        switch text.uppercased() {
        case "YUYV": return "YUY2"
        case "MJPEG", "JPEG", "JPG": return "MJPG"
        default: return text.uppercased()
        }
    }

    /// "1280x720 at 30 fps in YUY2", for messages.
    public var description: String {
        var parts: [String] = []
        if let size { parts.append("\(size.width)x\(size.height)") }
        if let fps { parts.append(parts.isEmpty ? "\(fps) fps" : "at \(fps) fps") }
        if let format { parts.append(parts.isEmpty ? format : "in \(format)") }
        return parts.joined(separator: " ")
    }
}
