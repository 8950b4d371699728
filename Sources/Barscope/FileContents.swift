import Foundation

/// A whole file's bytes, read with open and read.
///
/// Not `FileManager.contents(atPath:)` or `String(contentsOfFile:)`: on Linux, the toolchain's Foundation reads a
/// file that is empty when it asks its size into a 4 KB buffer it never frees when nothing comes (LeakSanitizer
/// found it under the tests, which poll files a running barscope is still writing; the spool reads its empty
/// segments the same way).
public enum FileContents {
    /// The file's bytes (empty for an empty file), or nil when it cannot be opened or read (missing, a folder, no
    /// permission).
    public static func read(atPath path: String) -> Data? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        var data = Data()
        data.reserveCapacity(Int(info.st_size))
        var chunk = [UInt8](repeating: 0, count: max(4096, min(Int(info.st_size) + 1, 1 << 20)))
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { return nil }
            if n == 0 { return data }
            data.append(contentsOf: chunk[0..<n])
        }
    }

    /// The file's text as UTF-8 (invalid bytes replaced), or nil as `read`.
    public static func text(atPath path: String) -> String? {
        read(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }
}
