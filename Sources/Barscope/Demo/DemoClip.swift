import CBarscope
import CCairo
import CGStreamer
import Foundation

/// Writes demo media: an H.264 MP4 of the demo scene with its truth, or a single symbol as a PNG.
public enum DemoClip {
    /// Encodes `options.frames` frames of the demo scene with x264 into an MP4 (the test and bench media):
    /// `appsrc ! videoconvert ! I420 ! x264enc ! h264parse ! mp4mux ! filesink`.
    /// - Parameter bFrames: x264's default B-frames (the first pts is then 66.7 ms, as from many encoders); off
    ///   gives a stream whose decode and presentation order agree.
    public static func writeMP4(to path: String, options: DemoOptions, bFrames: Bool = true) throws {
        try GStreamer.require(["appsrc", "videoconvert", "x264enc", "h264parse", "mp4mux", "filesink"])
        var o = options
        o.live = false
        if o.frames <= 0 { o.frames = 300 }
        let pipeline = try Pipeline(
            launch: "appsrc name=src ! videoconvert ! video/x-raw,format=I420 ! x264enc name=enc ! h264parse"
                + " ! mp4mux ! filesink name=out")
        guard let src = pipeline.child("src"), let enc = pipeline.child("enc"), let out = pipeline.child("out") else {
            return
        }
        DemoFeeder(options: o, format: .bgrx).attach(to: src, live: false)
        setProperty(enc, "speed-preset", "superfast")
        if o.bitrate > 0 {
            // Constant bitrate, as a camera's stream is: a low one smears bars and modules.
            setProperty(enc, "pass", "cbr")
            bs_set_uint(enc, "bitrate", UInt32(o.bitrate))
        } else {
            setProperty(enc, "pass", "qual")
            bs_set_uint(enc, "quantizer", 20)
        }
        bs_set_uint(enc, "key-int-max", UInt32(2 * o.fps))
        if !bFrames { bs_set_uint(enc, "bframes", 0) }
        bs_set_string(out, "location", path)
        try pipeline.playToEnd()
    }

    /// Encodes the demo scene into WebM (VP8, or VP9), a source format of its own for tests:
    /// `appsrc ! videoconvert ! I420 ! vp8enc|vp9enc ! webmmux ! filesink`.
    public static func writeWebM(to path: String, options: DemoOptions, vp9: Bool = false) throws {
        let encoder = vp9 ? "vp9enc" : "vp8enc"
        try encode(to: path, options: options, encoder: encoder, tail: "webmmux") { enc, o in
            // Realtime speed, and a bitrate high enough that bars and modules keep their edges (libvpx's
            // default of 256 kbit/s blurs them).
            // (Set from text: `deadline` is a 64-bit property, and the varargs setters take the exact type.)
            setProperty(enc, "deadline", "1")
            setProperty(enc, "cpu-used", "8")
            setProperty(enc, "target-bitrate", String(min(o.size.width * o.size.height * o.fps / 8, 50_000_000)))
            setProperty(enc, "keyframe-max-dist", String(2 * o.fps))
        }
    }

    /// Encodes the demo scene as H.264 in Matroska: `... ! x264enc ! h264parse ! matroskamux ! filesink`.
    public static func writeMatroska(to path: String, options: DemoOptions) throws {
        try encode(to: path, options: options, encoder: "x264enc", tail: "h264parse ! matroskamux") { enc, o in
            setProperty(enc, "speed-preset", "superfast")
            setProperty(enc, "pass", "qual")
            bs_set_uint(enc, "quantizer", 20)
            bs_set_uint(enc, "key-int-max", UInt32(2 * o.fps))
        }
    }

    /// `appsrc ! videoconvert ! I420 ! ENCODER ! TAIL ! filesink`, fed with the demo scene, played to its end.
    private static func encode(
        to path: String, options: DemoOptions, encoder: String, tail: String,
        configure: (UnsafeMutablePointer<GstElement>, DemoOptions) -> Void
    ) throws {
        let factories = tail.split(separator: "!").map { $0.trimmingCharacters(in: .whitespaces) }
        try GStreamer.require(["appsrc", "videoconvert", encoder, "filesink"] + factories)
        var o = options
        o.live = false
        if o.frames <= 0 { o.frames = 300 }
        let pipeline = try Pipeline(
            launch: "appsrc name=src ! videoconvert ! video/x-raw,format=I420 ! \(encoder) name=enc ! \(tail)"
                + " ! filesink name=out")
        guard let src = pipeline.child("src"), let enc = pipeline.child("enc"), let out = pipeline.child("out") else {
            return
        }
        DemoFeeder(options: o, format: .bgrx).attach(to: src, live: false)
        configure(enc, o)
        bs_set_string(out, "location", path)
        try pipeline.playToEnd()
    }

    /// The truth of every frame as JSON Lines: frame, and each code's type, data, polygon and whether it is
    /// inside the default viewfinder.
    public static func truthLines(options: DemoOptions) -> [String] {
        let scene = DemoScene(
            size: options.size, fps: options.fps, kind: options.scene, seed: options.seed, mix: options.mix)
        return (0..<max(options.frames, 0)).map { n in
            let codes: [JSONValue] = scene.placements(frame: n).map { p in
                .object(
                    [
                        ("type", .string(p.symbol.type)), ("data", .string(p.symbol.text)),
                        ("polygon", .array(p.polygon.map { .array([.int(Int($0.x)), .int(Int($0.y))]) })),
                        ("in_viewfinder", .bool(p.insideViewfinder)),
                    ] + (p.parcel.map { [("parcel", JSONValue.int($0))] } ?? []))
            }
            return JSONValue.object([("frame", .int(n)), ("codes", .array(codes))]).encoded()
        }
    }

    /// Draws one symbol on white with its quiet zone and writes it as a PNG (like the stock element's test image).
    /// - Parameter margin: white around the quiet zone, in pixels.
    public static func writePNG(_ symbol: BarcodeSymbol, to path: String, module: Int = 3, margin: Int = 20) throws {
        try writePNG([symbol], to: path, module: module, margin: margin)
    }

    /// Draws symbols side by side on white, each with its quiet zone, `margin` pixels around and between them
    /// (the parts of a structured append in one picture), and writes them as a PNG.
    public static func writePNG(_ symbols: [BarcodeSymbol], to path: String, module: Int = 3, margin: Int = 20)
        throws
    {
        let m = Double(module)
        let margin = Double(margin)
        func size(_ symbol: BarcodeSymbol) -> (w: Double, h: Double) {
            let wModules = Double(symbol.widthModules + 2 * symbol.quietZone)
            let hModules = Double(
                symbol.isTwoDimensional ? symbol.heightModules + 2 * symbol.quietZone : symbol.heightModules)
            return (wModules * m, hModules * m)
        }
        let sizes = symbols.map(size)
        let w = Int32(sizes.map(\.w).reduce(0, +) + Double(symbols.count + 1) * margin)
        let h = Int32((sizes.map(\.h).max() ?? 0) + 2 * margin)
        let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h)
        defer { cairo_surface_destroy(surface) }
        let cr = cairo_create(surface)!
        defer { cairo_destroy(cr) }
        cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE)
        cairo_set_source_rgb(cr, 1, 1, 1)
        cairo_paint(cr)
        cairo_set_source_rgb(cr, 0, 0, 0)
        var left = margin
        for (symbol, size) in zip(symbols, sizes) {
            let x0 = left + Double(symbol.quietZone) * m
            let y0 = margin + (symbol.isTwoDimensional ? Double(symbol.quietZone) * m : 0)
            for run in symbol.darkRuns {
                let rowHeight = symbol.isTwoDimensional ? m : Double(symbol.heightModules) * m
                cairo_rectangle(
                    cr, x0 + Double(run.start) * m, y0 + Double(run.row) * rowHeight, Double(run.length) * m,
                    rowHeight)
            }
            left += size.w + margin
        }
        cairo_fill(cr)
        let status = cairo_surface_write_to_png(surface, path)
        guard status == CAIRO_STATUS_SUCCESS else {
            throw BarscopeError.badInput(
                "\(path): cannot write PNG (\(String(cString: cairo_status_to_string(status))))")
        }
    }
}
