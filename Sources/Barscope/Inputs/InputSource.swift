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
    /// A still image file (PNG, JPEG, BMP, TIFF, WebP), read by `uridecodebin` as one frame; the run repeats it
    /// (`RunConfiguration.imageFrames`) so that a recording of it lasts long enough to be seen.
    case image(uri: String, path: String)
    /// A gst-launch fragment written by a pipeline file's author (`[source] launch`), whose output feeds the
    /// scanner; `live` when it runs on its own clock.
    case launch(String, live: Bool)

    /// Parses what the user wrote after `--input`: `demo`, a path, a URI or `/dev/videoN`.
    ///
    /// `/dev/video*`, and any other character device under `/dev`, is a camera (a device is never a media file;
    /// `v4l2src` then says whether it is a camera). Everything else that is not a URI is a file.
    /// - Throws: ``BarscopeError/badInput`` for a file that does not exist or a URI GStreamer cannot parse.
    public static func parse(_ text: String, demo: DemoOptions = DemoOptions()) throws -> InputSource {
        if text == "demo" { return .demo(demo) }
        if text.hasPrefix("/dev/") {
            var info = stat()
            let exists = stat(text, &info) == 0
            if text.hasPrefix("/dev/video") {
                guard exists else { throw BarscopeError.badInput("\(text): no such video device") }
                guard info.st_mode & S_IFMT == S_IFCHR else {
                    throw BarscopeError.badInput("\(text): not a video device (not a character device)")
                }
                return .device(text)
            }
            if exists && info.st_mode & S_IFMT == S_IFCHR { return .device(text) }
        }
        if text.contains("://") {
            GStreamer.initialize()
            guard gst_uri_is_valid(text) != 0 else {
                throw BarscopeError.badInput("\(Redact.uri(text)): not a valid URI")
            }
            return .uri(text, display: Redact.uri(text))
        }
        try checkReadableFile(text, kind: "a video")
        try ImageHeader.checkSize(ofFileAt: text)
        GStreamer.initialize()
        var error: UnsafeMutablePointer<GError>? = nil
        guard let uri = gst_filename_to_uri(text, &error) else {
            if let error { g_error_free(error) }
            throw BarscopeError.badInput("\(text): cannot make a URI of this path")
        }
        defer { g_free(uri) }
        if isStillImage(text) { return .image(uri: String(cString: uri), path: text) }
        return .uri(String(cString: uri), display: text)
    }

    /// True for sources that run on their own clock (cameras, network streams, the live demo).
    public var isLive: Bool {
        switch self {
        case .demo(let o): return o.live
        case .device: return true
        case .image: return false
        case .uri(let u, _): return !u.hasPrefix("file:")
        case .launch(_, let live): return live
        }
    }

    /// How messages name this input (credentials redacted).
    public var description: String {
        switch self {
        case .demo: return "demo"
        case .uri(_, let display): return display
        case .device(let d): return d
        case .image(_, let path): return path
        case .launch: return "[source] launch"
        }
    }

    /// Whether a file starts as a still image does: PNG, JPEG, BMP, TIFF or WebP. (GIF is left to the video
    /// path: it may be animated.) The content decides, not the name.
    static func isStillImage(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let head = [UInt8]((try? handle.read(upToCount: 12)) ?? Data())
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + magic.count && Array(head[offset..<offset + magic.count]) == magic
        }
        return starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) || starts([0xFF, 0xD8, 0xFF])
            || starts(Array("BM".utf8)) || starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A])
            || (starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8))
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
    /// Moving codes, or parcels on a conveyor (one at a time through the viewfinder: read cycles).
    public var scene: DemoScene.Kind = .codes
    /// The small-codes scene's texts and looks.
    public var seed: UInt64 = 1
    /// The mixed scene's codes (`scene` `.mix`).
    public var mix = DemoMix()
    /// A generated clip's H.264 bitrate in kbit/s, constant (0: constant quality, quantizer 20).
    public var bitrate = 0

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
    // Said plainly: GStreamer's own words for it ("Stream contains no data.") do not name the cause.
    // (Only a regular file: a FIFO reads as 0 bytes and may still bring a stream.)
    let attributes = try? FileManager.default.attributesOfItem(atPath: path)
    if attributes?[.type] as? FileAttributeType == .typeRegular, attributes?[.size] as? Int == 0 {
        throw BarscopeError.badInput("\(path): empty file (0 bytes), not \(kind)")
    }
}
