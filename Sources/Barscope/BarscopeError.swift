/// Everything that can stop Barscope, each naming the thing at fault in one line.
public enum BarscopeError: Error, CustomStringConvertible, Sendable, Equatable {
    /// A value given by the user cannot work (`-S`, a viewfinder, a size). Exit code 2.
    case badValue(String)
    /// An input that does not exist or cannot be read as media. Exit code 2.
    case badInput(String)
    /// A GStreamer error at run time, with the element that posted it. Exit code 3.
    case pipeline(GStreamerError)
    /// A required GStreamer element is missing. Exit code 3.
    /// `package` is nil when no Debian package of GStreamer's that Barscope knows brings it.
    case missingElement(name: String, package: String?)

    public var description: String {
        switch self {
        case .badValue(let m), .badInput(let m): return m
        case .pipeline(let e): return e.description
        case .missingElement(let name, let package?): return "no such element '\(name)' (install \(package))"
        case .missingElement(let name, nil): return "no such element '\(name)' (no installed GStreamer plugin has it)"
        }
    }

    /// The documented exit code for this failure.
    public var exitCode: Int32 {
        switch self {
        case .badValue, .badInput: return 2
        case .pipeline, .missingElement: return 3
        }
    }
}
