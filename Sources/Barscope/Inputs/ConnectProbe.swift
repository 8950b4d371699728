import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Says why a network source could not be reached, where GStreamer only says "Could not open resource for reading
/// and writing" (rtspsrc's words for a closed port, an unknown host and a silent one alike).
///
/// After the source has failed, one TCP connection is tried to the URI's host and port (RTSP's 554 by default):
/// the host's name does not resolve, nothing listens there (refused), nothing answers within the timeout, or the
/// port answers (the failure came later, in RTSP itself: nil, GStreamer's words stand). Never the credentials:
/// only host and port are named.
public enum ConnectProbe {
    /// The reason, or nil when the port accepts connections (or the URI has no host).
    public static func diagnose(uri: String, timeoutSeconds: Double = 3) -> String? {
        guard let url = URL(string: uri), let host = url.host, !host.isEmpty else { return nil }
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "rtsps" ? 322 : scheme.hasPrefix("rtsp") ? 554 : 80)
        let place = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"

        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>? = nil
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            return "cannot find the host '\(host)' (\(String(cString: gai_strerror(status))))"
        }
        defer { freeaddrinfo(list) }
        var lastError: Int32 = 0
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let a = entry {
            defer { entry = a.pointee.ai_next }
            let fd = socket(a.pointee.ai_family, a.pointee.ai_socktype | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            if connect(fd, a.pointee.ai_addr, a.pointee.ai_addrlen) == 0 { return nil }
            guard errno == EINPROGRESS else {
                lastError = errno
                continue
            }
            var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&p, 1, Int32(timeoutSeconds * 1000))
            if ready == 0 {
                lastError = ETIMEDOUT
                continue
            }
            var soError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &length)
            if soError == 0 { return nil }
            lastError = soError
        }
        switch lastError {
        case ECONNREFUSED: return "nothing listens on \(place) (connection refused)"
        case ETIMEDOUT: return "no answer from \(place) within \(Int(timeoutSeconds)) s"
        case ENETUNREACH, EHOSTUNREACH: return "\(place) cannot be reached (\(String(cString: strerror(lastError))))"
        default: return "cannot connect to \(place) (\(String(cString: strerror(lastError))))"
        }
    }
}
