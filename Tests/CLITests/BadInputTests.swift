import Barscope
import Foundation
import TestSupport
import Testing

/// Inputs that try to break the tool, as issue #8 lists them: each gives its exit code and exactly one line on
/// standard error naming the thing at fault, within seconds, without a crash.
@Suite(.serialized, .suiteLimit) struct BadInputTests {
    /// Files made once for the whole table.
    struct Fixtures {
        let empty: String, emptyPNG: String, truncated: String, random: String, text: String, huge: String
        let folderNamedMP4: String, garbageConf: String, clip: String

        init() throws {
            let dir = Tool.folder.appendingPathComponent("bad-input")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
            empty = path("empty.mp4")
            emptyPNG = path("empty.png")
            for p in [empty, emptyPNG] { _ = FileManager.default.createFile(atPath: p, contents: Data()) }
            // A real clip (H.264 in MP4, its index at the end as mp4mux writes it), cut in half.
            clip = path("clip.mp4")
            let gen = try Tool.run(["generate", clip, "--frames", "30", "--size", "320x240"])
            guard gen.status == 0 else { throw BarscopeError.badInput("generate failed: \(gen.stderr)") }
            let whole = try Data(contentsOf: URL(fileURLWithPath: clip))
            truncated = path("truncated.mp4")
            try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: truncated))
            random = path("random.mp4")
            var state: UInt64 = 0x2545_F491_4F6C_DD1D  // seeded: a failure reproduces byte for byte
            try Data(
                (0..<50_000).map { _ -> UInt8 in
                    state ^= state << 13
                    state ^= state >> 7
                    state ^= state << 17
                    return UInt8(truncatingIfNeeded: state)
                }
            ).write(to: URL(fileURLWithPath: random))
            text = path("notes.png")
            try "shopping list: milk, eggs\n".write(toFile: text, atomically: true, encoding: .utf8)
            huge = path("huge.png")
            try Self.writeHugePNG(to: huge, side: 30_000)
            folderNamedMP4 = path("folder.mp4")
            try FileManager.default.createDirectory(atPath: folderNamedMP4, withIntermediateDirectories: true)
            garbageConf = path("garbage.conf")
            // A valid first line, then binary.
            try (Data("[source]\n".utf8) + Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7919 ^ 0x5A) }))
                .write(to: URL(fileURLWithPath: garbageConf))
        }

        /// A valid PNG of side x side pixels, 1 bit deep, all white: 150 KB on disk, 900 MB once decoded to grey.
        /// Written by Python's zlib (PNG needs deflate, which Foundation on Linux does not offer).
        static func writeHugePNG(to path: String, side: Int) throws {
            let script = """
                import struct, sys, zlib
                w = h = int(sys.argv[2])
                def chunk(t, d): return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
                row = b"\\0" + b"\\xff" * ((w + 7) // 8)
                z = zlib.compressobj(9)
                idat = b"".join(z.compress(row) for _ in range(h)) + z.flush()
                ihdr = struct.pack(">IIBBBBB", w, h, 1, 0, 0, 0, 0)
                open(sys.argv[1], "wb").write(b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat)
                    + chunk(b"IEND", b""))
                """
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            p.arguments = ["-c", script, path, String(side)]
            try p.run()
            p.waitUntilExit()
            guard p.terminationStatus == 0 else { throw BarscopeError.badInput("python3 could not write \(path)") }
        }
    }

    static let fixtures = Result { try Fixtures() }

    struct Case: CustomStringConvertible, Sendable {
        var args: [String]
        var stderr: String
        var status: Int32 = 2
        /// Seconds it may take at most.
        var within: Double = 15
        var description: String { args.joined(separator: " ") }
    }

    static func cases() throws -> [Case] {
        let f = try fixtures.get()
        let vfMessage = "expected W:H with both sides positive (4:3), or 'off'"
        let insetsMessage = "expected N or top,left,bottom,right, each ≥ 0 pixels"
        return [
            // Files.
            Case(args: ["run", "/nonexistent/clip.mp4"], stderr: "/nonexistent/clip.mp4: no such file"),
            Case(args: ["scan", "/nonexistent/label.png"], stderr: "/nonexistent/label.png: no such file"),
            Case(args: ["run", f.empty, "--quiet"], stderr: "\(f.empty): empty file (0 bytes), not a video"),
            Case(args: ["scan", f.emptyPNG], stderr: "\(f.emptyPNG): empty file (0 bytes), not an image"),
            Case(
                args: ["run", f.truncated, "--quiet"],
                stderr:
                    "\(f.truncated): not a video or image GStreamer can read (This file contains no playable streams.)"),
            Case(
                args: ["run", f.random, "--quiet"],
                stderr: "\(f.random): not a video or image GStreamer can read (Could not determine type of stream.)"),
            Case(args: ["scan", f.text], stderr: "\(f.text): not an image (Could not determine type of stream.)"),
            Case(
                args: ["scan", f.huge],
                stderr: "\(f.huge): the image is 30000x30000 pixels, too large to scan (at most 120 megapixels)"),
            Case(
                args: ["run", f.huge, "--record", Tool.folder.appendingPathComponent("huge.mp4").path],
                stderr: "\(f.huge): the image is 30000x30000 pixels, too large to scan (at most 120 megapixels)"),
            // Network and devices: nothing listens on port 1; the password never shows.
            Case(
                args: ["run", "rtsp://admin:s3cret@127.0.0.1:1/stream", "--quiet"],
                stderr:
                    "rtsp://admin:***@127.0.0.1:1/stream: nothing listens on 127.0.0.1:1 (connection refused)",
                within: 10),
            Case(args: ["run", "/dev/video99"], stderr: "/dev/video99: no such video device"),
            // Recordings.
            Case(
                args: ["run", "demo", "--record", "/nonexistent/rec.mp4"],
                stderr: "/nonexistent/rec.mp4: cannot record (no such folder '/nonexistent')"),
            Case(
                args: ["run", "demo", "--record", f.folderNamedMP4, "--quiet"],
                stderr: "\(f.folderNamedMP4): cannot record (it is a folder)"),
            Case(
                args: ["run", "demo", "--record", "demo.avi"],
                stderr: "--record 'demo.avi': name it .mp4 or .mkv (H.264 in MP4 or Matroska)"),
            // Pipeline files (PipelineFileTests has the section, key and value errors).
            Case(args: ["validate", "/nonexistent/dock.conf"], stderr: "/nonexistent/dock.conf: no such file"),
            Case(args: ["run", "/nonexistent/dock.conf"], stderr: "/nonexistent/dock.conf: no such file"),
            // Decoder and viewfinder values.
            Case(
                args: ["run", "-Sfoo.enable"],
                stderr: "-S 'foo.enable': unknown symbology or setting (zbarimg syntax: 'disable', 'qrcode.enable', "
                    + "'i25.disable', 'ean13.enable=0'; also datamatrix, aztec, microqr, maxicode)"),
            Case(
                args: ["scan", "-Sqrcode.frobnicate", f.text],
                stderr: "-S 'qrcode.frobnicate': unknown symbology or setting (zbarimg syntax: 'disable', "
                    + "'qrcode.enable', 'i25.disable', 'ean13.enable=0'; also datamatrix, aztec, microqr, maxicode)"),
            Case(args: ["run", "--viewfinder", "0:3"], stderr: "--viewfinder '0:3': \(vfMessage)"),
            Case(args: ["run", "--viewfinder", "4:-3"], stderr: "--viewfinder '4:-3': \(vfMessage)"),
            Case(args: ["run", "--insets", "-5"], stderr: "--insets '-5': \(insetsMessage)"),
            Case(args: ["run", "--insets", "10,-1,10,10"], stderr: "--insets '10,-1,10,10': \(insetsMessage)"),
            Case(args: ["run", "--insets", "nan"], stderr: "--insets 'nan': \(insetsMessage)"),
            Case(
                args: ["run", "demo", "--insets", "400"],
                stderr: "viewfinder: no region fits in a 1280x720 frame with these insets "
                    + "(top 400, left 400, bottom 400, right 400)"),
            // Known only once the file's frame size is: the first caps stop the run.
            Case(
                args: ["run", f.clip, "--insets", "0,200,0,200", "--quiet"],
                stderr: "viewfinder: no region fits in a 320x240 frame with these insets "
                    + "(top 0, left 200, bottom 0, right 200)"),
            Case(
                args: ["run", "--region", "0.5,0.5,0.8,0.8"],
                stderr:
                    "--region '0.5,0.5,0.8,0.8': expected x,y,w,h as fractions of the frame, inside 0..1 (0.1,0.2,0.8,0.6)"
            ),
            Case(args: ["run", "--secondary", "0:1"], stderr: "--secondary '0:1': expected W:H"),
            // Options.
            Case(args: ["run", "--bogus"], stderr: "unknown option '--bogus' (see 'barscope run --help')"),
            Case(args: ["scan", "--bogus"], stderr: "unknown option '--bogus' (see 'barscope scan --help')"),
            Case(args: ["generate", "--bogus"], stderr: "unknown option '--bogus' (see 'barscope generate --help')"),
            Case(args: ["--bogus"], stderr: "unknown option '--bogus' (see 'barscope --help')"),
            Case(args: ["run", "-S"], stderr: "-S needs a value"),
            Case(args: ["run", "--frames", "-1"], stderr: "--frames '-1': expected a whole number ≥ 0"),
        ]
    }

    @Test func everyBadInputGivesOneExactLineAndItsExitCode() throws {
        let table = try Self.cases()
        for c in table {
            let start = Date()
            let r = try Tool.run(c.args, timeout: c.within + 30)
            let took = Date().timeIntervalSince(start)
            #expect(r.status == c.status, "\(c): exit \(r.status)")
            #expect(r.stderr == "barscope: \(c.stderr)\n", "\(c)")
            #expect(took < c.within, "\(c): took \(took) s")
        }
        #expect(table.count >= 30)
    }

    /// A binary file given as a pipeline file: GLib quotes the offending line, which must not pour control
    /// characters onto the terminal: one printable line, cut short.
    @Test func binaryPipelineFileGivesOneShortPrintableLine() throws {
        let f = try Self.fixtures.get()
        let r = try Tool.run(["validate", f.garbageConf])
        #expect(r.status == 2)
        #expect(r.stderr.hasPrefix("barscope: \(f.garbageConf): Key file contains line"), "\(r.stderr)")
        #expect(r.stderr.filter { $0 == "\n" }.count == 1)
        #expect(!r.stderr.unicodeScalars.dropLast().contains { $0.properties.generalCategory == .control })
        #expect(r.stderr.count < f.garbageConf.count + 200)
    }

    /// The 30000x30000 image is refused from its header: little memory and little time, where decoding it took
    /// 1.8 GB and 33 s.
    @Test func hugeImageIsRefusedInBoundedMemory() throws {
        let f = try Self.fixtures.get()
        for command in ["scan", "run"] {
            let rss = Tool.folder.appendingPathComponent("huge-\(command).rss").path
            let start = Date()
            let r = try Tool.run([command, f.huge], prefix: ["/usr/bin/time", "-f", "%M", "-o", rss])
            #expect(r.status == 2)
            #expect(Date().timeIntervalSince(start) < 5)
            // time writes "Command exited with non-zero status 2", then the figure.
            let report = try String(contentsOfFile: rss, encoding: .utf8)
            let peakKB = report.split(separator: "\n").last.flatMap { Int($0) } ?? .max
            Sanitizer.plainOnly("\(command): peak resident memory below 150 MB") {
                #expect(peakKB < 150_000, "\(command): peak resident memory \(peakKB) kB")
            }
        }
    }

    /// A truncated recording is not a broken input: barscope's fragmented MP4 cut in half plays its first half.
    @Test func truncatedFragmentedRecordingPlaysItsFirstPart() throws {
        let mp4 = Tool.folder.appendingPathComponent("whole-recording.mp4").path
        let rec = try Tool.run(["run", "demo", "--frames", "150", "--size", "320x240", "--record", mp4, "--quiet"])
        #expect(rec.status == 0, "\(rec.stderr)")
        let whole = try Data(contentsOf: URL(fileURLWithPath: mp4))
        let half = Tool.folder.appendingPathComponent("half-recording.mp4").path
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: half))
        let frames = try Tool.framesIn(half)
        #expect(frames >= 30 && frames < 150, "\(frames) frames in the first half")
    }

    /// Whether this process may mount a file system: CAP_SYS_ADMIN (capability 21) in its effective set, as root
    /// has it outside a locked-down container.
    static var canMount: Bool {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
            let caps = UInt64(line.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        return caps & (1 << 21) != 0
    }

    /// The disk fills up while recording (a 1 MB tmpfs): one line naming the recording and "no space left",
    /// exit 3 (the run failed), and what was written plays. Needs the right to mount; reported as skipped without
    /// it, and as a failure when the mount fails although the process may mount.
    @Test(.enabled(if: canMount, "needs CAP_SYS_ADMIN to mount a 1 MB tmpfs: run the tests as root"))
    func fullDiskKeepsWhatWasWritten() throws {
        let mountPoint = Tool.folder.appendingPathComponent("small-disk").path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mount = try Tool.shell("mount -t tmpfs -o size=1m tmpfs '\(mountPoint)'")
        try #require(mount == 0, "mount -t tmpfs failed (exit \(mount)) although CAP_SYS_ADMIN is held")
        defer { _ = try? Tool.shell("umount '\(mountPoint)'") }
        let mp4 = mountPoint + "/rec.mp4"
        let r = try Tool.run(["run", "demo", "--frames", "900", "--size", "640x360", "--record", mp4, "--quiet"])
        #expect(r.status == 3)
        #expect(r.stderr == "barscope: \(mp4): cannot record: no space left on the device\n")
        #expect(
            r.stdout.split(separator: "\n").last
                == #"{"event":"error","message":"\#(mp4): cannot record: no space left on the device"}"#)
        let frames = try Tool.framesIn(mp4)
        #expect(frames > 60, "\(frames) frames survived the full disk")
    }
}

/// A video with a stretch of bytes overwritten in its middle: the scanner goes on and reports the codes of the frames
/// after it, and the run ends as a normal one.
///
/// qtdemux and the decoders resynchronise by themselves. GStreamer 1.22's matroskademux (MKV, WebM) reads the noise
/// as top-level elements, takes one for a huge element and ends the stream there without an error (4 s of a 10 s
/// clip): barscope seeks on past it and says where the damage was.
@Suite(.serialized, .suiteLimit) struct CorruptVideoTests {
    @Test(arguments: ["mp4", "mkv", "webm"])
    func scannerGoesOnPastACorruptStretch(container: String) throws {
        let clip = Tool.folder.appendingPathComponent("whole-300.\(container)").path
        let gen = try Tool.run(["generate", clip, "--frames", "300", "--size", "640x360"])
        #expect(gen.status == 0, "\(gen.stderr)")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: clip)))
        // 4 KiB of noise about 5 s into the 10 s clip, seeded. In Matroska it starts on the first cluster past the
        // file's middle, where the demuxer reads top-level elements: the damage that makes it give up. (Noise inside
        // a frame's data is one the decoder resynchronises from by itself; where the middle byte falls depends on
        // the encoder's output, which varies with the machine's load.)
        var middle = bytes.count / 2
        if container != "mp4" {
            let cluster: [UInt8] = [0x1F, 0x43, 0xB6, 0x75]
            let start = (middle..<bytes.count - 4).first { Array(bytes[$0..<$0 + 4]) == cluster }
            try #require(start != nil, "no Matroska cluster past the middle of \(clip)")
            middle = start!
        }
        var state: UInt32 = 2_463_534_242
        for i in middle..<middle + 4096 {
            state ^= state << 13
            state ^= state >> 17
            state ^= state << 5
            bytes[i] = UInt8(truncatingIfNeeded: state)
        }
        let corrupt = Tool.folder.appendingPathComponent("corrupt-300.\(container)").path
        try Data(bytes).write(to: URL(fileURLWithPath: corrupt))
        let recording = Tool.folder.appendingPathComponent("corrupt-300-\(container).mkv").path
        let r = try Tool.run(["run", corrupt, "--every-frame", "--viewfinder", "off", "--quiet", "--record", recording])
        #expect(r.status == 0, "\(r.stderr)")
        let events = r.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let pts = events.filter { $0["event"] as? String == "detection" }.compactMap { $0["pts_ns"] as? Int }
        // Codes before the damage and in the last second of the clip, after it.
        #expect(pts.contains { $0 < 4_000_000_000 })
        #expect(pts.contains { $0 >= 9_000_000_000 }, "last detection at \(pts.max() ?? -1) ns")
        let frames = events.last?["frames"] as? Int ?? 0
        #expect(events.last?["event"] as? String == "eos" && frames >= 240 && frames <= 300, "\(frames) frames")
        // The annotated recording holds every frame scanned, the damage skipped.
        let recorded = try Tool.framesIn(recording)
        #expect(abs(recorded - frames) <= 2, "\(recorded) frames recorded of \(frames) scanned")
        // Detections in stream order: the timestamps jump over the damage, never back.
        #expect(pts == pts.sorted())
        if container != "mp4" {
            let warnings = events.filter { $0["event"] as? String == "warning" }.compactMap { $0["message"] as? String }
            #expect(
                warnings.contains {
                    $0.hasPrefix("\(corrupt): damaged between ") && $0.hasSuffix("scanning goes on after it")
                },
                "\(warnings)")
        }
    }
}
