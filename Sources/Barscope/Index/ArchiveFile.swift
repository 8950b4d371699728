import CGStreamer
import CGStreamerPbutils
import Foundation

/// One recording of an archive as `barscope index` knows it: its path, size and last change (together, the version
/// indexed: a file changed since is indexed again), and the run its sightings are keyed by.
public struct ArchiveFile: Sendable, Equatable {
    public var path: String
    public var size: Int64
    public var modifiedMicros: Int64

    public init(path: String, size: Int64, modifiedMicros: Int64) {
        self.path = path
        self.size = size
        self.modifiedMicros = modifiedMicros
    }

    /// The file as it is on disk now (its path made absolute); nil when it is missing or not a regular file.
    public init?(onDisk path: String) {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var st = stat()
        guard stat(absolute, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        let micros = Int64(st.st_mtim.tv_sec) * 1_000_000 + Int64(st.st_mtim.tv_nsec) / 1000
        self.init(path: (absolute as NSString).standardizingPath, size: Int64(st.st_size), modifiedMicros: micros)
    }

    /// The run of its sightings: the same for every scan of this version of the file, whichever worker makes it, so
    /// a file scanned again (its worker killed) upserts the same rows instead of adding new ones.
    public var run: String {
        // FNV-1a, 64 bits, of path, size and last change: stable across processes and machines.
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in "\(path)\u{0}\(size)\u{0}\(modifiedMicros)".utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return "file-" + String(h, radix: 16)
    }

    /// Where its start time came from.
    public enum StartSource: String, Sendable {
        case metadata, name, given
        case lastChange = "last change"
    }

    /// The UTC time of its first frame: its container's own datetime tag, else a timestamp in its name, else
    /// `given`; nil leaves it to the recorder (the last change less the length, as `run` does).
    public func start(given: Date?) -> (date: Date, source: StartSource)? {
        if let d = Self.taggedStart(path) { return (d, .metadata) }
        if let d = Self.nameStart((path as NSString).lastPathComponent) { return (d.date, .name) }
        if let given { return (given, .given) }
        return nil
    }

    /// A timestamp in a file's name, read as UTC: `YYYYMMDD-HHMMSS`, `YYYYMMDD_HHMMSS`, `YYYYMMDDTHHMMSS`,
    /// `YYYY-MM-DD_HH-MM-SS`, `YYYY-MM-DDTHH:MM:SS` (as cameras and NVRs name their files); also the part of the name
    /// before it (`dock1` of `dock1-20261205-143000.mp4`), a camera's name.
    public static func nameStart(_ name: String) -> (date: Date, before: String)? {
        let pattern = /(\d{4})(-?)(\d{2})\2(\d{2})[-_T ](\d{2})([-:]?)(\d{2})\6(\d{2})/
        guard let m = name.firstMatch(of: pattern) else { return nil }
        var c = DateComponents()
        c.year = Int(m.1)
        c.month = Int(m.3)
        c.day = Int(m.4)
        c.hour = Int(m.5)
        c.minute = Int(m.7)
        c.second = Int(m.8)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard (1...12).contains(c.month!), (1...31).contains(c.day!), c.hour! < 24, c.minute! < 60, c.second! < 61,
            let date = calendar.date(from: c), calendar.component(.day, from: date) == c.day
        else { return nil }
        let before = String(name[..<m.range.lowerBound]).trimmingCharacters(in: CharacterSet(charactersIn: "-_. "))
        return (date, before)
    }

    /// The container's `datetime` tag (an MP4's creation time, a Matroska file's DateUTC), through GStreamer's
    /// discoverer; nil when it has none, or it cannot be read (the scan then says what is wrong with the file).
    static func taggedStart(_ path: String) -> Date? {
        discovered(path) { info -> Date? in
            guard let tags = gst_discoverer_info_get_tags(info) else { return nil }
            var tagged: OpaquePointer? = nil
            guard gst_tag_list_get_date_time(tags, "datetime", &tagged) != 0, let tagged else { return nil }
            defer { gst_date_time_unref(tagged) }
            // A date without a time of day is no start.
            guard gst_date_time_has_time(tagged) != 0, let g = gst_date_time_to_g_date_time(tagged) else { return nil }
            defer { g_date_time_unref(g) }
            let seconds = Double(g_date_time_to_unix(g)) + Double(g_date_time_get_microsecond(g)) / 1e6
            // Muxers that are given no time write 0 (1904 or 1970): not a start.
            return seconds > 86_400 * 365 ? Date(timeIntervalSince1970: seconds) : nil
        }
    }

    /// What GStreamer's discoverer reads of a media file (ten seconds at most for its headers), given to `read`;
    /// nil when the file cannot be read.
    static func discovered<T>(_ path: String, _ read: (OpaquePointer) -> T?) -> T? {
        GStreamer.initialize()
        var error: UnsafeMutablePointer<GError>? = nil
        guard let discoverer = gst_discoverer_new(10 * 1_000_000_000, &error) else {
            g_clear_error(&error)
            return nil
        }
        defer { g_object_unref(UnsafeMutableRawPointer(discoverer)) }
        guard let uri = g_filename_to_uri(path, nil, nil) else { return nil }
        defer { g_free(uri) }
        let info = gst_discoverer_discover_uri(discoverer, uri, &error)
        g_clear_error(&error)
        guard let info else { return nil }
        defer { g_object_unref(UnsafeMutableRawPointer(info)) }
        guard gst_discoverer_info_get_result(info) == GST_DISCOVERER_OK else { return nil }
        return read(info)
    }
}
