import CGStreamer
import Foundation

/// Where frames come from.
public enum InputSource: Sendable, Equatable, CustomStringConvertible {
    /// The built-in synthetic source of moving barcodes.
    case demo(DemoOptions)
    /// A file or a URI (`file://`, `rtsp://`, `http://`...), read by `uridecodebin`.
    case uri(String, display: String)
    /// A V4L2 camera, `/dev/videoN`.
    case device(String)

    /// Parses what the user wrote after `--input`: `demo`, a path, a URI or `/dev/videoN`.
    /// - Throws: ``BarscopeError/badInput`` for a file that does not exist or a URI GStreamer cannot parse.
    public static func parse(_ text: String, demo: DemoOptions = DemoOptions()) throws -> InputSource {
        if text == "demo" { return .demo(demo) }
        if text.hasPrefix("/dev/video") {
            guard FileManager.default.fileExists(atPath: text) else {
                throw BarscopeError.badInput("\(text): no such video device")
            }
            return .device(text)
        }
        if text.contains("://") {
            GStreamer.initialize()
            guard gst_uri_is_valid(text) != 0 else { throw BarscopeError.badInput("\(Redact.uri(text)): not a valid URI") }
            return .uri(text, display: Redact.uri(text))
        }
        try checkReadableFile(text, kind: "a video")
        GStreamer.initialize()
        var error: UnsafeMutablePointer<GError>? = nil
        guard let uri = gst_filename_to_uri(text, &error) else {
            if let error { g_error_free(error) }
            throw BarscopeError.badInput("\(text): cannot make a URI of this path")
        }
        defer { g_free(uri) }
        return .uri(String(cString: uri), display: text)
    }

    /// True for sources that run on their own clock (cameras, network streams, the live demo).
    public var isLive: Bool {
        switch self {
        case .demo(let o): return o.live
        case .device: return true
        case .uri(let u, _): return !u.hasPrefix("file:")
        }
    }

    /// How messages name this input (credentials redacted).
    public var description: String {
        switch self {
        case .demo: return "demo"
        case .uri(_, let display): return display
        case .device(let d): return d
        }
    }
}

/// The demo source's settings.
public struct DemoOptions: Sendable, Equatable {
    public var size: Size
    public var fps: Int
    /// Frames to produce; 0 = until stopped.
    public var frames: Int
    /// Paced by the clock (like a camera) rather than as fast as possible.
    public var live: Bool

    public init(size: Size = Size(width: 1280, height: 720), fps: Int = 30, frames: Int = 300, live: Bool = false) {
        self.size = size
        self.fps = fps
        self.frames = frames
        self.live = live
    }
}

/// Removes credentials from anything that may be shown: `rtsp://user:***@host/...`.
public enum Redact {
    public static func uri(_ text: String) -> String {
        guard let scheme = text.range(of: "://") else { return text }
        let rest = text[scheme.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        // Userinfo ends at the last "@" of the authority; a password with an unescaped "/", "?" or "#" pushes
        // that "@" past the first "/", so then any "@" preceded by a ":" counts (over-redacting is the safe side).
        var at = rest[..<authorityEnd].lastIndex(of: "@")
        if at == nil, let later = rest.lastIndex(of: "@"), rest[..<later].contains(":") { at = later }
        guard let at else { return text }
        let user = rest[..<at].split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
        return String(text[..<scheme.upperBound]) + user + ":***" + String(rest[at...])
    }
}

/// Fails with one line naming the path when it is missing, a directory or unreadable.
/// - Parameter kind: what the file should be, for the message ("a video", "an image").
func checkReadableFile(_ path: String, kind: String) throws {
    var isDir: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
        throw BarscopeError.badInput("\(path): no such file")
    }
    guard !isDir.boolValue else { throw BarscopeError.badInput("\(path): is a directory, not \(kind)") }
    guard FileManager.default.isReadableFile(atPath: path) else {
        throw BarscopeError.badInput("\(path): cannot read (permission denied)")
    }
}
