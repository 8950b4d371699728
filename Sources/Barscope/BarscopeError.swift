/// Everything that can stop Barscope, each naming the thing at fault in one line. Typed where a program acts on the
/// kind (the restart policy, the service's status); the command line prints `description`.
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
    /// A live source sent no frame for `seconds` without closing (the watchdog). Exit code 3.
    case streamStalled(input: String, seconds: Int)
    /// Frames kept coming but none was scanned for `seconds` (the scanning is stuck). Exit code 3.
    case scanningStalled(input: String, seconds: Int)
    /// A network source could not be reached: `reason` says why (unknown host, refused, no answer). Exit code 2.
    case sourceUnreachable(input: String, reason: String)
    /// The server refused the credentials, or asked for some. Exit code 2.
    case notAuthorized(input: String, reason: String)
    /// A file or still image gave neither a picture nor an error within `seconds`, twice. Exit code 2.
    case noPicture(input: String, seconds: Int)
    /// The recording failed while running (a full disk, a failing one): what was written stays playable. Exit code 3.
    case recording(path: String, reason: String)

    public var description: String {
        switch self {
        case .badValue(let m), .badInput(let m): return m
        case .pipeline(let e): return e.description
        case .missingElement(let name, let package?): return "no such element '\(name)' (install \(package))"
        case .missingElement(let name, nil): return "no such element '\(name)' (no installed GStreamer plugin has it)"
        case .streamStalled(let input, let seconds): return "\(input): no frame for \(seconds) s (the stream stalled)"
        case .scanningStalled(let input, let seconds):
            return "\(input): no frame scanned for \(seconds) s while frames came (the scanning stalled)"
        case .sourceUnreachable(let input, let reason), .notAuthorized(let input, let reason):
            return "\(input): \(reason)"
        case .noPicture(let input, let seconds):
            return "\(input): not a video or image GStreamer can read (no picture after \(seconds) s)"
        case .recording(let path, let reason): return "\(path): cannot record: \(reason)"
        }
    }

    /// The documented exit code for this failure.
    public var exitCode: Int32 {
        switch self {
        case .badValue, .badInput, .sourceUnreachable, .notAuthorized, .noPicture: return 2
        case .pipeline, .missingElement, .streamStalled, .scanningStalled, .recording: return 3
        }
    }

    /// A mistake in what the user gave (a wrong password, a missing file, a bad value): trying again cannot help.
    public var isUsersMistake: Bool {
        switch self {
        case .badValue, .badInput, .notAuthorized, .noPicture, .missingElement: return true
        case .pipeline, .streamStalled, .scanningStalled, .sourceUnreachable, .recording: return false
        }
    }
}
