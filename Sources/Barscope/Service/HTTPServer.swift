import CSoup
import Foundation

/// One request, as the routes see it (copied out of libsoup's message on the main loop's thread).
public struct HTTPRequest: Sendable {
    public var method: String
    /// The path's components, decoded: `/v1/instances/abc` → ["v1", "instances", "abc"].
    public var components: [String]
    public var query: [String: String]
    public var headers: [String: String]
    public var body: [UInt8]
}

/// libsoup 3's HTTP server on the process's GLib main loop (no HTTP parsing of our own): a bearer token checked in
/// constant time, request bodies limited before they are read, one route function for every request.
/// Used on the main loop's thread only.
///
/// The token comes in `Authorization: Bearer TOKEN`, or, for GET only, in the cookie `barscope_token_PORT` (what a
/// browser's `EventSource` can send; a cookie never changes anything, so a page of another site that makes the
/// browser send it can only ask for what it cannot read; the port in its name keeps it from another service of
/// the same host). A request from a browser page of another origin (its `Origin` header) is refused: a page the
/// operator has open elsewhere cannot start pipelines on a loopback service that has no token.
public final class HTTPServer: @unchecked Sendable {
    // Sendable: its fields are set in init and never after; libsoup calls the handlers on the main loop's thread.
    /// Request bodies above this are refused (413) before they are read.
    public static let maxBody = 64 * 1024
    private let server: UnsafeMutablePointer<SoupServer>
    private let token: [UInt8]?
    /// Paths answered without the token: the console's page and its script and style, which hold no secret.
    private let publicPaths: Set<String>
    private let route: (HTTPRequest, HTTPExchange) -> Void
    /// The port actually bound (0 asked: any free one).
    public private(set) var port = 0

    /// - Parameters:
    ///   - token: when given, every request needs `Authorization: Bearer TOKEN` (401 otherwise).
    ///   - route: answers each request, at once or later (on this thread) through the exchange.
    /// - Throws: ``BarscopeError/badValue`` when it cannot listen there.
    ///   - publicPaths: paths served without the token.
    public init(
        host: String, port: Int, token: String?, publicPaths: Set<String> = [],
        route: @escaping (HTTPRequest, HTTPExchange) -> Void
    ) throws {
        self.token = token.map { Array($0.utf8) }
        self.publicPaths = publicPaths
        self.route = route
        server = UnsafeMutableRawPointer(g_object_new_with_properties(soup_server_get_type(), 0, nil, nil)!)
            .assumingMemoryBound(to: SoupServer.self)
        let me = Unmanaged.passUnretained(self).toOpaque()
        // Early: the headers are in, the body is not: a request that is refused is refused before it is read.
        soup_server_add_early_handler(
            server, nil,
            { _, msg, _, _, data in
                guard let msg, let data else { return }
                Unmanaged<HTTPServer>.fromOpaque(data).takeUnretainedValue().early(msg)
            }, me, nil)
        soup_server_add_handler(
            server, nil,
            { _, msg, path, query, data in
                guard let msg, let data else { return }
                Unmanaged<HTTPServer>.fromOpaque(data).takeUnretainedValue().handle(msg, path: path, query: query)
            }, me, nil)
        let literal = host == "localhost" ? "127.0.0.1" : host
        guard let address = g_inet_socket_address_new_from_string(literal, UInt32(port)) else {
            throw BarscopeError.badValue("--listen '\(host):\(port)': not an IP address and port")
        }
        defer { g_object_unref(UnsafeMutableRawPointer(address)) }
        // Our own listening socket, for its backlog: GLib's default of 10 made a thousand clients connecting at once
        // wait on SYN retries (82 s for 1000 idle connections); the kernel caps it at somaxconn.
        var error: UnsafeMutablePointer<GError>? = nil
        func fail(_ what: String) -> BarscopeError {
            let why = error.map { String(cString: $0.pointee.message) } ?? "unknown"
            if let error { g_error_free(error) }
            return BarscopeError.badValue("--listen \(host):\(port): cannot \(what) (\(why))")
        }
        guard
            let socket = g_socket_new(
                g_socket_address_get_family(address), G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error)
        else { throw fail("make a socket") }
        defer { g_object_unref(UnsafeMutableRawPointer(socket)) }
        g_socket_set_listen_backlog(socket, 4096)
        guard g_socket_bind(socket, address, 1, &error) != 0 else { throw fail("listen there") }
        guard g_socket_listen(socket, &error) != 0 else { throw fail("listen there") }
        guard soup_server_listen_socket(server, socket, SoupServerListenOptions(rawValue: 0), &error) != 0 else {
            throw fail("serve there")
        }
        if let local = g_socket_get_local_address(socket, nil) {
            self.port = Int(
                g_inet_socket_address_get_port(
                    UnsafeMutableRawPointer(local).assumingMemoryBound(to: GInetSocketAddress.self)))
            g_object_unref(UnsafeMutableRawPointer(local))
        }
    }

    deinit {
        soup_server_disconnect(server)
        g_object_unref(UnsafeMutableRawPointer(server))
    }

    private func header(_ msg: OpaquePointer, _ name: String) -> String? {
        soup_message_headers_get_one(soup_server_message_get_request_headers(msg), name).map { String(cString: $0) }
    }

    private func authorized(_ msg: OpaquePointer) -> Bool {
        guard let token else { return true }
        let method = String(cString: soup_server_message_get_method(msg))
        if method == "GET", let uri = soup_server_message_get_uri(msg), let path = g_uri_get_path(uri),
            publicPaths.contains(String(cString: path))
        {
            return true
        }
        if let authorization = header(msg, "Authorization") {
            return Self.same(Array(authorization.utf8), Array("Bearer ".utf8) + token)
        }
        if method == "GET", let cookie = Self.cookie("barscope_token_\(port)", in: header(msg, "Cookie")) {
            return Self.same(Array(cookie.utf8), token)
        }
        return false
    }

    /// A cookie's value (percent-decoded) from a `Cookie` header.
    static func cookie(_ name: String, in header: String?) -> String? {
        guard let header else { return nil }
        for pair in header.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name {
                let value = parts[1].trimmingCharacters(in: .whitespaces)
                return value.removingPercentEncoding ?? value
            }
        }
        return nil
    }

    private static func same(_ given: [UInt8], _ expected: [UInt8]) -> Bool {
        // Constant time: every byte of the longer is looked at, whatever matches.
        var difference = given.count ^ expected.count
        for i in 0..<max(given.count, expected.count) {
            let a = i < given.count ? given[i] : 0
            let b = i < expected.count ? expected[i] : 0
            difference |= Int(a ^ b)
        }
        return difference == 0
    }

    private func early(_ msg: OpaquePointer) {
        let exchange = HTTPExchange(msg)
        // A refused request's body is not kept (libsoup still reads it off the wire) and its connection closes.
        func refuse(_ status: Int, _ why: String) {
            soup_message_body_set_accumulate(soup_server_message_get_request_body(msg), 0)
            soup_message_headers_replace(soup_server_message_get_response_headers(msg), "Connection", "close")
            exchange.error(status, why)
        }
        // Browsers send Origin with every request that could change something; ours comes from our own page.
        if let origin = header(msg, "Origin"), let host = header(msg, "Host"),
            origin != "http://\(host)" && origin != "https://\(host)"
        {
            refuse(403, "a request from the page of another origin (\(origin))")
            return
        }
        if !authorized(msg) {
            soup_message_headers_replace(
                soup_server_message_get_response_headers(msg), "WWW-Authenticate", "Bearer realm=\"barscope\"")
            refuse(401, "missing or wrong token (Authorization: Bearer TOKEN)")
            return
        }
        let headers = soup_server_message_get_request_headers(msg)
        if soup_message_headers_get_encoding(headers) == SOUP_ENCODING_CHUNKED {
            // A chunked body's size is known only once read: a request must say it up front.
            refuse(411, "a request body needs a Content-Length (at most \(Self.maxBody) bytes)")
            return
        }
        if let length = header(msg, "Content-Length").flatMap({ Int($0) }), length > Self.maxBody {
            refuse(413, "request body of \(length) bytes: at most \(Self.maxBody)")
        }
    }

    private func handle(_ msg: OpaquePointer, path: UnsafePointer<CChar>?, query: OpaquePointer?) {
        // Answered early (401, 413): nothing more to do.
        guard soup_server_message_get_status(msg) == 0 else { return }
        let exchange = HTTPExchange(msg)
        var body: [UInt8] = []
        if let b = soup_server_message_get_request_body(msg), b.pointee.length > 0, let data = b.pointee.data {
            guard b.pointee.length <= Self.maxBody else {
                exchange.error(413, "request body of \(b.pointee.length) bytes: at most \(Self.maxBody)")
                return
            }
            body = data.withMemoryRebound(to: UInt8.self, capacity: Int(b.pointee.length)) {
                Array(UnsafeBufferPointer(start: $0, count: Int(b.pointee.length)))
            }
        }
        var q: [String: String] = [:]
        if let query {
            var iter = GHashTableIter()
            g_hash_table_iter_init(&iter, query)
            var k: gpointer? = nil
            var v: gpointer? = nil
            while g_hash_table_iter_next(&iter, &k, &v) != 0 {
                if let k, let v {
                    q[String(cString: k.assumingMemoryBound(to: CChar.self))] = String(
                        cString: v.assumingMemoryBound(to: CChar.self))
                }
            }
        }
        let rawPath = path.map { String(cString: $0) } ?? "/"
        let components = rawPath.split(separator: "/", omittingEmptySubsequences: true).map {
            String($0).removingPercentEncoding ?? String($0)
        }
        var headers: [String: String] = [:]
        for name in ["Last-Event-ID", "Accept", "Content-Type", "Range"] { headers[name] = header(msg, name) }
        let request = HTTPRequest(
            method: String(cString: soup_server_message_get_method(msg)), components: components, query: q,
            headers: headers, body: body)
        route(request, exchange)
    }
}
