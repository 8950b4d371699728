import CSoup
import Foundation

/// One request's answer (libsoup's SoupServerMessage, one reference held). On the main loop's thread only; an answer
/// that takes time (a stop, a frame to wait for) `defer()`s first and answers later through `MainLoop.run`.
/// A stream (Server-Sent Events, MJPEG) writes chunks as they come and is closed by `finish()` or by the client.
public final class HTTPExchange: @unchecked Sendable {
    // Sendable: its state is touched on the main loop's thread only (a late answer comes back through
    // `MainLoop.run`); other threads only carry it there.
    let message: OpaquePointer
    private var paused = false
    private var streaming = false
    private var finished = false
    /// Chunks handed to libsoup and chunks it has written: their difference is what a slow client has not taken.
    private var appended = 0
    private var written = 0
    /// Called once when the client goes away or the answer is complete.
    public var onClose: (() -> Void)? = nil

    init(_ message: OpaquePointer) {
        self.message = message
        g_object_ref(UnsafeMutableRawPointer(message))
    }

    deinit {
        // The message belongs to the main loop's thread: the last reference goes there.
        if Thread.isMainThread {
            g_object_unref(UnsafeMutableRawPointer(message))
        } else {
            nonisolated(unsafe) let m = message
            MainLoop.run { g_object_unref(UnsafeMutableRawPointer(m)) }
        }
    }

    /// The answer will come later (the connection waits; nothing blocks).
    public func deferAnswer() {
        guard !paused else { return }
        paused = true
        soup_server_message_pause(message)
    }

    private func resume() {
        if paused {
            paused = false
            soup_server_message_unpause(message)
        }
    }

    /// Every answer closes its connection after it (`Connection: close`). libsoup 3.2 (Debian 12's 3.2.3) never
    /// closes a kept-alive connection the client closed while idle: its socket stays in CLOSE-WAIT, with its
    /// memory, for the life of the process (fixed in 3.3.0 by libsoup commit d20c6601, as gvsbuild's backport of it,
    /// its PR 849, says; not checked against libsoup's history here). The service soak
    /// (scripts/soak_serve.py) saw one descriptor leak per request (docs/decisions.md). A connection per request
    /// costs a TCP handshake; a connection that is never closed costs a descriptor for good.
    static func closeAfter(_ message: OpaquePointer) {
        soup_message_headers_replace(soup_server_message_get_response_headers(message), "Connection", "close")
    }

    public func respond(_ status: Int, contentType: String, body: [UInt8], headers: [(String, String)] = []) {
        soup_server_message_set_status(message, UInt32(status), nil)
        let h = soup_server_message_get_response_headers(message)
        Self.closeAfter(message)
        for (k, v) in headers { soup_message_headers_replace(h, k, v) }
        body.withUnsafeBufferPointer { b in
            soup_server_message_set_response(message, contentType, SOUP_MEMORY_COPY, b.baseAddress, gsize(b.count))
        }
        resume()
    }

    public func json(_ status: Int, _ value: JSONValue) {
        respond(status, contentType: "application/json", body: Array((value.encoded() + "\n").utf8))
    }

    /// `{"error": "one line"}` with its status.
    public func error(_ status: Int, _ message: String) {
        json(status, .object([("error", .string(message))]))
    }

    /// Starts a response that is written piece by piece (chunked), never held whole in memory.
    public func beginStream(contentType: String, headers: [(String, String)] = []) {
        streaming = true
        soup_server_message_set_status(message, 200, nil)
        let h = soup_server_message_get_response_headers(message)
        soup_message_headers_set_encoding(h, SOUP_ENCODING_CHUNKED)
        soup_message_headers_replace(h, "Content-Type", contentType)
        soup_message_headers_replace(h, "Cache-Control", "no-cache")
        Self.closeAfter(message)
        for (k, v) in headers { soup_message_headers_replace(h, k, v) }
        soup_message_body_set_accumulate(soup_server_message_get_response_body(message), 0)
        let me = Unmanaged.passRetained(self).toOpaque()
        let wrote: @convention(c) (OpaquePointer?, gpointer?) -> Void = { _, data in
            guard let data else { return }
            Unmanaged<HTTPExchange>.fromOpaque(data).takeUnretainedValue().written += 1
        }
        g_signal_connect_data(
            UnsafeMutableRawPointer(message), "wrote-chunk", unsafeBitCast(wrote, to: GCallback.self), me, nil,
            GConnectFlags(rawValue: 0))
        let done: @convention(c) (OpaquePointer?, gpointer?) -> Void = { _, data in
            guard let data else { return }
            let me = Unmanaged<HTTPExchange>.fromOpaque(data)
            me.takeUnretainedValue().closed()
            me.release()
        }
        g_signal_connect_data(
            UnsafeMutableRawPointer(message), "finished", unsafeBitCast(done, to: GCallback.self), me, nil,
            GConnectFlags(rawValue: 0))
        resume()
    }

    /// Chunks the client has not taken yet.
    public var backlog: Int { appended - written }
    public var isOpen: Bool { streaming && !finished }

    public func write(_ bytes: [UInt8]) {
        guard isOpen else { return }
        bytes.withUnsafeBufferPointer { b in
            soup_message_body_append(
                soup_server_message_get_response_body(message), SOUP_MEMORY_COPY, b.baseAddress, gsize(b.count))
        }
        appended += 1
        // libsoup pauses a chunked answer whenever it has written every chunk: each new one unpauses it.
        soup_server_message_unpause(message)
    }

    /// Ends a stream (the last chunk), as when the client is too slow or the instance has ended.
    public func finish() {
        guard isOpen else { return }
        finished = true
        soup_message_body_complete(soup_server_message_get_response_body(message))
        soup_server_message_unpause(message)
    }

    /// Lets a client go that does not take what is sent (a slow reader): the connection is shut, and whatever
    /// watched for it stops now, not when (if ever) the client would have read the rest.
    public func drop() {
        finish()
        if let socket = soup_server_message_get_socket(message) { g_socket_shutdown(socket, 1, 1, nil) }
        closed()
    }

    private func closed() {
        finished = true
        let close = onClose
        onClose = nil
        close?()
    }
}
