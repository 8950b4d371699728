/// Where and how the annotated video is recorded: H.264 in a crash-tolerant container, whole or in segments.
///
/// - MP4 is written fragmented (a fragment a second): a killed process leaves a file that plays up to its last
///   fragment. Matroska (`.mkv`) stays readable when interrupted by design.
/// - With `segmentSeconds`, `splitmuxsink` starts a new file every N seconds (at a keyframe), named
///   `NAME-00000.EXT`, `NAME-00001.EXT`, ... so that names sort by time.
public struct Recording: Hashable, Sendable {
    public enum Container: String, Sendable { case mp4, mkv }
    public var path: String
    public var container: Container
    public var segmentSeconds: Int?

    /// - Throws: ``BarscopeError/badValue`` when the extension is neither `.mp4` nor `.mkv`.
    public init(path: String, segmentSeconds: Int? = nil) throws {
        let ext = path.split(separator: ".").last.map { $0.lowercased() } ?? ""
        guard path.contains("."), let container = Container(rawValue: ext == "mkv" ? "mkv" : ext) else {
            throw BarscopeError.badValue("--record '\(path)': name it .mp4 or .mkv (H.264 in MP4 or Matroska)")
        }
        self.path = path
        self.container = container
        self.segmentSeconds = segmentSeconds
    }

    /// The muxer factory.
    var muxer: String { container == .mp4 ? "mp4mux" : "matroskamux" }

    /// `clip.mp4` → `clip-%05d.mp4` for segments.
    public var segmentPattern: String {
        let ext = "." + container.rawValue
        let stem = path.hasSuffix(ext) ? String(path.dropLast(ext.count)) : path
        return stem + "-%05d" + ext
    }

    /// The file of segment `n`.
    public func segment(_ n: Int) -> String {
        let ext = "." + container.rawValue
        let stem = path.hasSuffix(ext) ? String(path.dropLast(ext.count)) : path
        let number = String(n)
        return stem + "-" + String(repeating: "0", count: max(0, 5 - number.count)) + number + ext
    }
}
