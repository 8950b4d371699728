import CBarscope
import CGStreamer
import CGStreamerRTSPServer
import Foundation

/// An RTSP server (gst-rtsp-server) in this process, on its own GLib main loop and thread, serving one mount whose
/// media is built from `launch` (our own description; address, port and path go through the server's API).
public final class RTSPServer: @unchecked Sendable {
    // Sendable: made once; the GLib objects are used by the server's main-loop thread and released in deinit.
    private let server: UnsafeMutablePointer<GstRTSPServer>
    private let context: OpaquePointer
    private let loop: OpaquePointer
    private let sourceID: UInt32
    /// What clients open: rtsp://HOST:PORT/PATH (the port actually bound when 0 was asked for).
    public let url: String
    public let port: Int

    /// - Parameters:
    ///   - prepare: a last look at the server and the media factory before it listens (authentication, roles).
    /// - Throws: ``BarscopeError/badInput`` when it cannot listen there.
    public init(
        host: String, port: Int, path: String, launch: String, shared: Bool = true,
        prepare: (UnsafeMutablePointer<GstRTSPServer>, UnsafeMutablePointer<GstRTSPMediaFactory>) -> Void = { _, _ in }
    ) throws {
        GStreamer.initialize()
        server = gst_rtsp_server_new()
        gst_rtsp_server_set_address(server, host)
        gst_rtsp_server_set_service(server, String(port))
        let factory = gst_rtsp_media_factory_new()!
        gst_rtsp_media_factory_set_launch(factory, launch)
        gst_rtsp_media_factory_set_shared(factory, shared ? 1 : 0)
        prepare(server, factory)
        let mounts = gst_rtsp_server_get_mount_points(server)!
        gst_rtsp_mount_points_add_factory(mounts, path, factory)  // takes the factory
        g_object_unref(UnsafeMutableRawPointer(mounts))
        context = g_main_context_new()
        sourceID = gst_rtsp_server_attach(server, context)
        guard sourceID != 0 else {
            g_main_context_unref(context)
            g_object_unref(UnsafeMutableRawPointer(server))
            throw BarscopeError.badInput("rtsp://\(host):\(port)\(path): cannot listen there (in use?)")
        }
        self.port = Int(gst_rtsp_server_get_bound_port(server))
        url = "rtsp://\(host):\(self.port)\(path)"
        loop = g_main_loop_new(context, 0)
        nonisolated(unsafe) let running = loop  // the thread holds the loop, not this object
        let thread = Thread { g_main_loop_run(running) }
        thread.name = "barscope-rtsp-server"
        thread.start()
    }

    /// Drops every connected client, as a server going away does.
    public func disconnectAll() {
        let kept = gst_rtsp_server_client_filter(server, { _, _, _ in GST_RTSP_FILTER_REMOVE }, nil)
        if let kept { g_list_free(kept) }  // REMOVE keeps none; nothing to unref
    }

    deinit {
        g_main_loop_quit(loop)
        if let source = g_main_context_find_source_by_id(context, sourceID) { g_source_destroy(source) }
        g_main_loop_unref(loop)
        g_main_context_unref(context)
        g_object_unref(UnsafeMutableRawPointer(server))
    }
}

/// Serves the annotated stream over RTSP (`--serve-rtsp 127.0.0.1:8554/dock`).
///
/// The scan graph hands its annotated frames to an `intervideosink`; each client's media starts from the matching
/// `intervideosrc` and encodes for the network (x264, zero latency). The channel name is our own.
final class RTSPOut: Sendable {
    let server: RTSPServer
    /// The intervideo channel joining the scan graph to the served media.
    let channel: String
    var url: String { server.url }

    /// Where to serve: `HOST:PORT/PATH` (the host defaults to loopback: `:8554/dock` serves 127.0.0.1; port 0 =
    /// any free one).
    struct Endpoint: Hashable, Sendable {
        var host: String
        var port: Int
        var path: String

        /// - Throws: ``BarscopeError/badValue`` naming the value.
        init(parsing text: String) throws {
            let slash = text.firstIndex(of: "/")
            let hostPort = slash.map { String(text[..<$0]) } ?? text
            let path = slash.map { String(text[$0...]) } ?? "/barscope"
            let parts = hostPort.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2, let port = Int(parts[1]), (0...65535).contains(port), path.count > 1 else {
                throw BarscopeError.badValue("--serve-rtsp '\(text)': expected HOST:PORT/PATH (127.0.0.1:8554/dock)")
            }
            self.host = parts[0].isEmpty ? "127.0.0.1" : parts[0]
            self.port = port
            self.path = path
        }
    }

    /// What the served media is made of (the scan graph's plan requires them up front).
    static let factories = ["intervideosrc", "videoconvert", "x264enc", "rtph264pay"]

    init(endpoint: Endpoint) throws {
        let channel = "barscope-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        self.channel = channel
        server = try RTSPServer(
            host: endpoint.host, port: endpoint.port, path: endpoint.path,
            launch: "( intervideosrc name=in channel=\(channel) timeout=0 ! videoconvert ! video/x-raw,format=I420 "
                + "! x264enc tune=zerolatency speed-preset=ultrafast key-int-max=30 ! rtph264pay name=pay0 pt=96 )")
    }
}
