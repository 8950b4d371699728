import Foundation

/// Which decoding engine reads the codes.
public enum Engine: String, Sendable, CaseIterable {
    /// ZBar alone: the fastest; the default on video.
    case zbar
    /// zxing-cpp alone.
    case zxing
    /// Both, results cross-checked: the default for still images.
    case both

    /// Parses `--engine zbar|zxing|both`.
    public static func parse(_ text: String) throws -> Engine {
        guard let e = Engine(rawValue: text) else {
            throw BarscopeError.badValue("engine '\(text)': expected zbar, zxing or both")
        }
        return e
    }
}
