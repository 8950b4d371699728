import CBarscope
import CGStreamer

/// The part of our graph an element belongs to, decided by identity (the element or one inside it), never by its
/// name or path: the source (`src`, and an rtspsrc uridecodebin made inside it) or the recording (`rec`, and
/// splitmuxsink's own file sink).
enum ElementRole: Sendable, Equatable {
    case source
    case recording
    case other
}

/// Turns a bus error into the one line a user reads, naming the input or the recording when they are at fault.
/// Pure but for `diagnose`, which asks the network why an RTSP server could not be reached.
enum RunErrors {
    static func map(
        _ e: GStreamerError, role: ElementRole, configuration c: RunConfiguration,
        diagnose: (String) -> String? = { ConnectProbe.diagnose(uri: $0) }
    ) -> BarscopeError {
        let input = c.input.description
        let fromSource = role == .source
        let resource = e.domain == "gst-resource-error-quark"
        if resource && e.code == GST_RESOURCE_ERROR_NOT_AUTHORIZED.rawValue {
            if case .uri(let uri, _) = c.input, Redact.uri(uri) != uri {
                return .notAuthorized(
                    input: input, reason: "wrong user name or password (the server said: \(e.message))")
            }
            if let k = c.rtspCredentials {
                return .notAuthorized(
                    input: input,
                    reason: "wrong user name or password (user '\(k.user)' from BARSCOPE_RTSP_USER; the server said: "
                        + "\(e.message))")
            }
            return .notAuthorized(
                input: input,
                reason: "the server asks for a user name and password; give them in the URI "
                    + "(rtsp://user:password@host/...) or in BARSCOPE_RTSP_USER and BARSCOPE_RTSP_PASSWORD")
        }
        if e.isNotFound && fromSource { return .badInput("\(input): not found (\(e.message))") }
        // rtspsrc's own words ("Could not open resource for reading and writing.") do not say it never connected:
        // ask the network why (an unknown host, a closed port, an unreachable network and a silent host read alike).
        if fromSource, resource, case .uri(let uri, _) = c.input, uri.lowercased().hasPrefix("rtsp") {
            if let reason = diagnose(uri) { return .sourceUnreachable(input: input, reason: reason) }
            if e.code == GST_RESOURCE_ERROR_OPEN_READ_WRITE.rawValue {
                return .badInput("\(input): the server took the connection but the stream did not open (\(e.message))")
            }
        }
        if e.isTypeNotFound || (fromSource && e.domain == "gst-stream-error-quark") {
            return .badInput("\(input): not a video or image GStreamer can read (\(e.message))")
        }
        if fromSource { return .badInput("\(input): \(e.message)") }
        if role == .recording, let r = c.recording {
            // A disk that fills up, or fails, while recording is a failure of the run (exit 3), not of the user's
            // input: what was written up to then stays playable (fragmented MP4, Matroska).
            if resource && e.code == GST_RESOURCE_ERROR_NO_SPACE_LEFT.rawValue {
                return .recording(path: r.path, reason: "no space left on the device")
            }
            if resource && e.code == GST_RESOURCE_ERROR_WRITE.rawValue {
                return .recording(path: r.path, reason: e.message)
            }
            return .badInput("\(r.path): cannot record (\(e.message))")
        }
        return .pipeline(e)
    }
}
