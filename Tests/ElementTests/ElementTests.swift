import Barscope
import CBarscope
import CCairo
import CGStreamer
import CGStreamerVideo
import Foundation
import TestSupport
import Testing

/// The built plugin, libgstbarscope.so, next to the test bundle.
enum Plugin {
    static let folder: URL = {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<3 {
            if FileManager.default.fileExists(atPath: dir.appendingPathComponent("libgstbarscope.so").path) {
                return dir
            }
            dir.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: ".build/debug")
    }()
    static var path: String { folder.appendingPathComponent("libgstbarscope.so").path }

    /// Loads the plugin into this process's registry once (as GST_PLUGIN_PATH would).
    static let loaded: Bool = {
        GStreamer.initialize()
        var error: UnsafeMutablePointer<GError>? = nil
        guard let plugin = gst_plugin_load_file(path, &error) else {
            if let error { g_error_free(error) }
            return false
        }
        gst_object_unref(UnsafeMutableRawPointer(plugin))
        return true
    }()

    static let folderForMedia: URL = {
        ScratchFolder.make("barscope-element")
    }()

    static let eanImage: String = {
        let path = folderForMedia.appendingPathComponent("ean13-9876543210128.png").path
        try! DemoClip.writePNG(try! EAN13.symbol("987654321012"), to: path, module: 3)
        return path
    }()
}

/// One `barcode` message, read field by field.
struct BarcodeMessage {
    var fields: [String: String] = [:]  // field name → GType name
    var type = "", symbol = ""
    var quality: Int32 = 0
    var timestamp: UInt64 = 0
    var polygon: [[Int32]] = []
    var frameHasBufferAndCaps = false
}

/// Runs `launch` (our own description; the location is set as a property) and collects its barcode messages.
func barcodeMessages(_ launch: String, location: String) throws -> [BarcodeMessage] {
    let pipeline = try Pipeline(launch: launch)
    bs_set_string(try #require(pipeline.child("src")), "location", location)
    pipeline.setState(GST_STATE_PLAYING)
    let bus = gst_element_get_bus(pipeline.element)!
    defer {
        gst_object_unref(bus)
        pipeline.setState(GST_STATE_NULL)
    }
    var found: [BarcodeMessage] = []
    loop: while let msg = gst_bus_timed_pop(bus, 30_000_000_000) {
        defer { gst_message_unref(msg) }
        switch bs_message_type(msg) {
        case GST_MESSAGE_ELEMENT:
            guard let s = gst_message_get_structure(msg), String(cString: gst_structure_get_name(s)) == "barcode"
            else { continue }
            var m = BarcodeMessage()
            for i in 0..<gst_structure_n_fields(s) {
                let name = String(cString: gst_structure_nth_field_name(s, UInt32(i)))
                m.fields[name] = String(cString: g_type_name(gst_structure_get_field_type(s, name)))
            }
            m.type = String(cString: gst_structure_get_string(s, "type"))
            m.symbol = String(cString: gst_structure_get_string(s, "symbol"))
            gst_structure_get_int(s, "quality", &m.quality)
            var ts: UInt = 0
            gst_structure_get_uint64(s, "timestamp", &ts)
            m.timestamp = UInt64(ts)
            if let poly = gst_structure_get_value(s, "polygon") {
                for i in 0..<gst_value_array_get_size(poly) {
                    let point = gst_value_array_get_value(poly, i)!
                    m.polygon.append(
                        (0..<gst_value_array_get_size(point)).map {
                            g_value_get_int(gst_value_array_get_value(point, $0))
                        })
                }
            }
            if let frame = gst_structure_get_value(s, "frame"), let boxed = g_value_get_boxed(frame) {
                let sample = OpaquePointer(boxed)
                m.frameHasBufferAndCaps = gst_sample_get_buffer(sample) != nil && gst_sample_get_caps(sample) != nil
            }
            found.append(m)
        case GST_MESSAGE_EOS: break loop
        case GST_MESSAGE_ERROR:
            throw BarscopeError.pipeline(GStreamerError(domain: "test", code: 0, message: "pipeline error"))
        default: continue
        }
    }
    return found
}

@Suite(.serialized, .suiteLimit) struct ElementTests {
    /// The stock element's check test, against both elements: one message, EAN-13, the symbol, quality ≥ 90,
    /// the same fields with the same types, and no frame unless asked.
    @Test(arguments: ["zbar", "barscope"])
    func stockCheckOnTheEanImage(element: String) throws {
        try #require(Plugin.loaded, "libgstbarscope.so did not load from \(Plugin.path)")
        let messages = try barcodeMessages(
            "filesrc name=src ! pngdec ! videoconvert ! video/x-raw,format=I420 ! \(element) ! fakesink",
            location: Plugin.eanImage)
        #expect(messages.count == 1)
        let m = try #require(messages.first)
        #expect(m.type == "EAN-13")
        #expect(m.symbol == "9876543210128")
        #expect(m.quality >= 90)
        #expect(m.fields["frame"] == nil)
        let stockFields = [
            "timestamp": "guint64", "stream-time": "guint64", "running-time": "guint64", "type": "gchararray",
            "symbol": "gchararray", "quality": "gint",
        ]
        for (name, type) in stockFields {
            #expect(m.fields[name] == type, "\(element): \(name) is \(m.fields[name] ?? "missing")")
        }
        if element == "barscope" {
            #expect(m.polygon.count == 4)
            #expect(m.fields["bounds"] == "GstValueArray")
        }
    }

    @Test(arguments: ["zbar", "barscope"])
    func attachFrameGivesASampleWithBufferAndCaps(element: String) throws {
        try #require(Plugin.loaded)
        let messages = try barcodeMessages(
            "filesrc name=src ! pngdec ! videoconvert ! video/x-raw,format=I420 ! \(element) attach-frame=true "
                + "! fakesink", location: Plugin.eanImage)
        #expect(messages.count == 1)
        #expect(messages.first?.fields["frame"] == "GstSample")
        #expect(messages.first?.frameHasBufferAndCaps == true)
    }

    /// On a demo clip: every code in every frame, polygons within 4 px of the truth; with a viewfinder, nothing
    /// from outside it, coordinates still full-frame.
    @Test(arguments: [false, true])
    func demoClipPolygonsAndViewfinder(viewfinder: Bool) throws {
        try #require(Plugin.loaded)
        let options = DemoOptions(size: Size(width: 960, height: 540), fps: 30, frames: 30)
        let clip = Plugin.folderForMedia.appendingPathComponent("demo.mp4").path
        if !FileManager.default.fileExists(atPath: clip) { try DemoClip.writeMP4(to: clip, options: options) }
        let vf = viewfinder ? " viewfinder=4:3" : ""
        let messages = try barcodeMessages(
            "filesrc name=src ! qtdemux ! h264parse ! avdec_h264 ! barscope\(vf) ! fakesink", location: clip)
        let scene = DemoScene(size: options.size, fps: options.fps)
        // Every frame holds codes, so the distinct timestamps in order are the frames in order.
        let timestamps = Set(messages.map(\.timestamp)).sorted()
        #expect(timestamps.count == options.frames)
        var matched = 0
        var expected = 0
        for n in 0..<min(options.frames, timestamps.count) {
            let inFrame = messages.filter { $0.timestamp == timestamps[n] }
            for t in scene.placements(frame: n) where !viewfinder || t.insideViewfinder {
                expected += 1
                guard let m = inFrame.first(where: { $0.symbol == t.symbol.text }) else { continue }
                let corners = m.polygon.map { Point(Double($0[0]), Double($0[1])) }
                let error = t.polygon.map { p in corners.map { $0.distance(to: p) }.min() ?? .infinity }.max() ?? 0
                if error <= 4 { matched += 1 }
            }
            if viewfinder {
                let outside = Set(scene.placements(frame: n).filter { !$0.insideViewfinder }.map(\.symbol.text))
                #expect(inFrame.allSatisfy { !outside.contains($0.symbol) }, "frame \(n) reported a code outside")
            }
        }
        #expect(expected == options.frames * (viewfinder ? 3 : 5))
        #expect(Double(matched) >= 0.95 * Double(expected), "\(matched)/\(expected)")
    }

    /// draw=true on BGRx: the picture that leaves the element carries the mask outside the viewfinder, the
    /// viewfinder outline, and the code's outline, at the pixels where they belong; the rest is untouched.
    @Test func drawsTheOverlayInPlace() throws {
        try #require(Plugin.loaded)
        // EAN-13 with 150 px of white around it: bars at x 183...468, y 150...300 (3 px modules).
        let image = Plugin.folderForMedia.appendingPathComponent("ean-wide.png").path
        try DemoClip.writePNG(try EAN13.symbol("987654321012"), to: image, module: 3, margin: 150)
        let out = Plugin.folderForMedia.appendingPathComponent("drawn.png").path
        let pipeline = try Pipeline(
            launch: "filesrc name=src ! pngdec ! videoconvert ! video/x-raw,format=BGRx ! barscope draw=true "
                + "viewfinder=2:1 insets=4 ! videoconvert ! pngenc ! filesink name=out")
        bs_set_string(try #require(pipeline.child("src")), "location", image)
        bs_set_string(try #require(pipeline.child("out")), "location", out)
        try pipeline.playToEnd(timeoutSeconds: 30)

        let original = cairo_image_surface_create_from_png(image)!
        let drawn = cairo_image_surface_create_from_png(out)!
        defer {
            cairo_surface_destroy(original)
            cairo_surface_destroy(drawn)
        }
        let w = Int(cairo_image_surface_get_width(drawn))
        let h = Int(cairo_image_surface_get_height(drawn))
        #expect(w == Int(cairo_image_surface_get_width(original)))
        func pixel(_ s: OpaquePointer, _ x: Int, _ y: Int) -> [Int] {
            let data = cairo_image_surface_get_data(s)!
            let stride = Int(cairo_image_surface_get_stride(s))
            let p = data + y * stride + x * 4
            return [Int(p[2]), Int(p[1]), Int(p[0])]
        }
        let region = try #require(
            Viewfinder(aspectRatio: AspectRatio(2, 1), minimumInset: EdgeInsets(all: 4))
                .region(in: Size(width: w, height: h)))
        // Outside the region: white paper under the 0.66 black mask → 255 × 0.34 ≈ 87.
        let masked = pixel(drawn, w / 2, 2)
        #expect(masked.allSatisfy { abs($0 - 87) <= 6 }, "\(masked)")
        #expect(pixel(original, w / 2, 2) == [255, 255, 255])
        // The viewfinder outline: white on the region's top edge, away from the rounded corners.
        #expect(pixel(drawn, w / 2, region.y) == [255, 255, 255])
        #expect(pixel(drawn, w / 2, region.y - 3) != [255, 255, 255])
        // Inside the region, clear of the code's drawings: untouched.
        #expect(pixel(drawn, region.x + 10, region.y + 10) == pixel(original, region.x + 10, region.y + 10))
        // The code's outline: opaque blue, 12 % of the code's width plus half a line left of the bars (x ≈ 147).
        let blue = (120..<183).filter { x in pixel(drawn, x, 225) == [0, 0, 255] }
        #expect(!blue.isEmpty && blue.allSatisfy { abs($0 - 147) <= 3 }, "blue outline at \(blue)")
    }

    /// A frame that basetransform passes through read-only (passthrough) is never drawn on, even when `draw` says
    /// draw: the decision is the frame's mapping, not the property, which may flip between the two (issue 13,
    /// defect 6). The race's moment is made here by setting passthrough by hand after draw=true.
    @Test func neverDrawsOnAFramePassedThroughReadOnly() throws {
        try #require(Plugin.loaded)
        let out = Plugin.folderForMedia.appendingPathComponent("passthrough.png").path
        let pipeline = try Pipeline(
            launch: "videotestsrc pattern=white num-buffers=1 ! video/x-raw,format=BGRx,width=320,height=240 "
                + "! barscope name=b draw=true viewfinder=1:1 ! videoconvert ! pngenc ! filesink name=out")
        bs_set_string(try #require(pipeline.child("out")), "location", out)
        let element = try #require(pipeline.child("b"))
        gst_base_transform_set_passthrough(
            UnsafeMutableRawPointer(element).assumingMemoryBound(to: GstBaseTransform.self), 1)
        try pipeline.playToEnd(timeoutSeconds: 30)
        let drawn = try #require(cairo_image_surface_create_from_png(out))
        defer { cairo_surface_destroy(drawn) }
        let data = try #require(cairo_image_surface_get_data(drawn))
        // Outside a 1:1 viewfinder the mask would darken the white: it must not be there.
        #expect([data[0], data[1], data[2]] == [255, 255, 255], "the corner pixel was drawn on")
        // And the same pipeline without the forced passthrough draws (the test can fail).
        let drawnOut = Plugin.folderForMedia.appendingPathComponent("drawn-mask.png").path
        let normal = try Pipeline(
            launch: "videotestsrc pattern=white num-buffers=1 ! video/x-raw,format=BGRx,width=320,height=240 "
                + "! barscope draw=true viewfinder=1:1 ! videoconvert ! pngenc ! filesink name=out")
        bs_set_string(try #require(normal.child("out")), "location", drawnOut)
        try normal.playToEnd(timeoutSeconds: 30)
        let masked = try #require(cairo_image_surface_create_from_png(drawnOut))
        defer { cairo_surface_destroy(masked) }
        #expect(try #require(cairo_image_surface_get_data(masked))[0] < 128)
    }

    /// threads=2: frames go on at once, two scanners work, and the messages are the same as with one thread, in
    /// frame order.
    @Test func scanningThreadsGiveTheSameMessagesInOrder() throws {
        try #require(Plugin.loaded)
        let clip = Plugin.folderForMedia.appendingPathComponent("demo-threads.mp4").path
        if !FileManager.default.fileExists(atPath: clip) {
            try DemoClip.writeMP4(to: clip, options: DemoOptions(size: Size(width: 960, height: 540), frames: 40))
        }
        func messages(_ threads: Int) throws -> [BarcodeMessage] {
            try barcodeMessages(
                "filesrc name=src ! qtdemux ! h264parse ! avdec_h264 ! barscope threads=\(threads) ! fakesink",
                location: clip)
        }
        let one = try messages(1)
        let two = try messages(2)
        #expect(one.count == 40 * 5)
        #expect(two.count == one.count)
        // Same codes, same frames, same order; corners agree to a pixel or two (each ZBar scanner places 1D edges
        // a little differently).
        let keys = { (m: [BarcodeMessage]) in m.map { "\($0.timestamp) \($0.type) \($0.symbol)" } }
        let firstDifference = zip(keys(one), keys(two)).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(firstDifference == nil, "first difference at message \(firstDifference?.offset ?? -1)")
        let worst =
            zip(one, two).map { a, b in
                zip(a.polygon, b.polygon).map { max(abs($0[0] - $1[0]), abs($0[1] - $1[1])) }.max() ?? 0
            }.max() ?? 0
        #expect(worst <= 2, "corners differ by \(worst) px")
    }

    /// gst-launch-1.0 with GST_PLUGIN_PATH, as a GStreamer user runs it; and gst-inspect-1.0's page as a golden file.
    @Test func gstLaunchAndInspectWithThePluginPath() throws {
        // Standard output returned; the exit status and standard error checked here: a GLib critical or warning
        // (our element misusing GObject or GStreamer says so there and nowhere else), a GStreamer error, a
        // sanitizer's report, or any other complaint fails the test with the lines.
        func run(_ args: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            p.arguments = args
            var env = ProcessInfo.processInfo.environment
            env["GST_PLUGIN_PATH"] = Plugin.folder.path
            p.environment = Sanitizer.environment(env)
            let out = Pipe()
            let err = Pipe()
            p.standardOutput = out
            p.standardError = err
            try p.run()
            // Both pipes read to their end at once (a chatty child never blocks on a full one); a child past 120 s
            // is stopped, and the test says so.
            let timer = DispatchWorkItem { [p] in if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
            DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: timer)
            let errText = Locked(Data())
            let reading = DispatchGroup()
            reading.enter()
            DispatchQueue.global().async {
                let data = err.fileHandleForReading.readDataToEndOfFile()
                errText.withLock { $0 = data }
                reading.leave()
            }
            let data = out.fileHandleForReading.readDataToEndOfFile()
            reading.wait()
            p.waitUntilExit()
            timer.cancel()
            let command = args.prefix(2).joined(separator: " ")
            let stderr = String(decoding: errText.withLock { $0 }, as: UTF8.self)
            #expect(
                p.terminationReason == .exit && p.terminationStatus == 0,
                "\(command): exit \(p.terminationStatus) (\(p.terminationReason == .exit ? "exited" : "killed")); standard error: \(stderr.suffix(4000))",
                sourceLocation: sourceLocation)
            let complaints = stderr.split(separator: "\n").filter { line in
                ["CRITICAL", "WARNING", "ERROR", "Sanitizer"].contains { line.contains($0) }
            }
            #expect(
                complaints.isEmpty, "\(command): on standard error: \(complaints.prefix(20).joined(separator: "\n"))",
                sourceLocation: sourceLocation)
            return String(decoding: data, as: UTF8.self)
        }
        // The demo clip through gst-launch-1.0 -m: frame 0's messages carry every code, its polygon within 4 px.
        let options = DemoOptions(size: Size(width: 960, height: 540), fps: 30, frames: 30)
        let clip = Plugin.folderForMedia.appendingPathComponent("demo-launch.mp4").path
        if !FileManager.default.fileExists(atPath: clip) { try DemoClip.writeMP4(to: clip, options: options) }
        let launched = try run([
            "gst-launch-1.0", "-m", "filesrc", "location=\(clip)", "!", "qtdemux", "!", "h264parse", "!",
            "avdec_h264", "!", "barscope", "!", "fakesink",
        ])
        let lines = launched.split(separator: "\n").filter { $0.contains("(element): barcode,") }
        #expect(lines.count == options.frames * 5)
        func field(_ line: Substring, _ name: String) -> String? {
            guard let r = line.range(of: "\(name)=(") else { return nil }
            let rest = line[r.upperBound...]
            guard let close = rest.firstIndex(of: ")") else { return nil }
            let value = rest[rest.index(after: close)...]
            return String(value.prefix { $0 != "," && $0 != ";" })
        }
        let timestamps = lines.compactMap { field($0, "timestamp").flatMap { UInt64($0) } }
        let first = try #require(timestamps.min())
        let truth = DemoScene(size: options.size).placements(frame: 0)
        for t in truth {
            let line = try #require(
                lines.first { field($0, "timestamp") == String(first) && field($0, "symbol") == t.symbol.text },
                "\(t.symbol.text) missing from frame 0")
            #expect(field(line, "type") == t.symbol.type)
            // polygon=(int)< < (int)x, (int)y >, ... >
            let afterPolygon = line[line.range(of: "polygon=")!.upperBound...]
            let polygonText = afterPolygon[
                ..<(afterPolygon.range(of: ", bounds=")?.lowerBound ?? afterPolygon.endIndex)]
            let numbers = polygonText.split(whereSeparator: { !"0123456789-".contains($0) }).compactMap { Int($0) }
            let corners = stride(from: 0, to: numbers.count - 1, by: 2).map {
                Point(Double(numbers[$0]), Double(numbers[$0 + 1]))
            }
            #expect(corners.count == 4)
            let error = t.polygon.map { p in corners.map { $0.distance(to: p) }.min() ?? .infinity }.max() ?? 0
            #expect(error <= 4, "\(t.symbol.text): \(error) px")
        }

        let inspect = try run(["gst-inspect-1.0", "barscope"])
            .split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.contains("Filename") }  // the only line that depends on where the build is
            .joined(separator: "\n")
        let golden = try String(
            contentsOf: try #require(Bundle.module.url(forResource: "gst-inspect-barscope", withExtension: "txt")),
            encoding: .utf8)
        #expect(inspect == golden, "regenerate with scripts/golden-inspect if the change is intended")
    }
}
