import Barscope
import Foundation
import TestSupport
import Testing

/// Named pipelines: the shipped files validate; broken files give one line naming file, section, key and value;
/// the command line overrides the file.
@Suite(.serialized, .suiteLimit) struct PipelineFileTests {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")
        .standardized

    @Test func shippedPipelinesValidateAndAreListed() throws {
        let files = try FileManager.default.contentsOfDirectory(
            atPath: Self.repo.appendingPathComponent("pipelines").path
        )
        .filter { $0.hasSuffix(".conf") }.sorted()
        #expect(files.count >= 4)
        for f in files {
            let path = Self.repo.appendingPathComponent("pipelines/\(f)").path
            let r = try Tool.run(["validate", path])
            #expect(r.status == 0 && r.stdout == "\(path): ok\n", "\(f): \(r.stderr)")
            // Each opens with a comment saying what it is for and an example command.
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(text.hasPrefix("# ") && text.contains("barscope run"), "\(f) opens with what it does and how")
        }
        let list = try Tool.run(["pipelines"])
        #expect(list.status == 0)
        #expect(list.stdout.contains("demo") && list.stdout.contains("file-annotate"))
    }

    @Test(arguments: [
        (
            "[viewfinder]\naspect-ratio = 4-3\n",
            "[viewfinder] aspect-ratio: viewfinder '4-3': expected W:H with both sides positive (4:3), or 'off'"
        ),
        ("[viewfinderx]\n", "[viewfinderx]: unknown section (one of cycles, decoder, display, events"),
        ("[source]\nsizes = 640x480\n", "[source] sizes: unknown key (one of input, launch, size, fps, frames, live"),
        ("[source]\nfps = 10\n\n[viewfinder]\n[source]\nfps = 30\n", "[source] fps: given twice (lines 2 and 6)"),
        ("[source]\nfps = fast\n", "[source] fps: 'fast' is not a whole number ≥ 1"),
        ("[decoder]\nsymbologies = qrcode.enable foo.enable\n", "[decoder] symbologies: -S 'foo.enable': unknown"),
        ("[overlay]\nbox-color = green\n", "[overlay] box-color: style box-color='green': expected #RRGGBB"),
        ("[record]\nsegment-seconds = 10\n", "[record] segment-seconds: needs [record] path"),
        ("[viewfinder]\nregion = 0.1,0.1,0.5,0.5\naspect-ratio = 16:9\n", "[viewfinder]: give either region"),
        ("this is not an ini file\n", "Key file contains line"),
        ("[source]\nlaunch = videotestsrc ! nosuchfilter\n", "no such element 'nosuchfilter' (no installed"),
        (
            "[source]\nlaunch = videotestsrc\n[properties]\nmissing.pattern = ball\n",
            "[properties] missing.pattern: no element named 'missing' in the graph"
        ),
        (
            "[source]\nlaunch = videotestsrc name=v\n[properties]\nv.colour = red\n",
            "[properties] v.colour: element 'v' has no property 'colour'"
        ),
        ("[properties]\npattern = ball\n", "[properties] pattern: expected ELEMENT.PROPERTY = VALUE"),
        ("[branch thumbs]\nfrom = raw\n", "[branch thumbs] launch: required (a gst-launch fragment)"),
        (
            "[branch thumbs]\nfrom = sideways\nlaunch = fakesink\n",
            "[branch thumbs] from: 'sideways' is not annotated or raw"
        ),
        ("[branch thumbs]\nto = fakesink\n", "[branch thumbs] to: unknown key (one of from, launch)"),
    ])
    func brokenFilesNameTheirFault(text: String, message: String) throws {
        let path = Tool.folder.appendingPathComponent("broken-\(abs(text.hashValue)).conf").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let r = try Tool.run(["validate", path])
        #expect(r.status == 2)
        #expect(r.stderr.hasPrefix("barscope: \(path): \(message)"), "\(r.stderr)")
        #expect(r.stderr.filter { $0 == "\n" }.count == 1)
    }

    /// Advanced graphs: the file gives its own source and an extra branch as gst-launch fragments; the user's
    /// values (here the output path) reach them as properties on named elements, never pasted into the fragment.
    @Test func fragmentsForTheSourceAndExtraBranches() throws {
        let folder = Tool.folder.appendingPathComponent("thumbs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = Tool.folder.appendingPathComponent("advanced.conf").path
        try """
        # A test pattern scanned, and a JPEG thumbnail of every annotated frame.
        #   barscope run advanced.conf --set properties.thumbs.location=/tmp/thumb-%04d.jpg
        [source]
        launch = videotestsrc name=pattern num-buffers=24 ! video/x-raw,width=320,height=240,framerate=24/1
        [branch thumbs]
        from = annotated
        launch = videoscale ! video/x-raw,width=160,height=120 ! jpegenc ! multifilesink name=thumbs
        [properties]
        pattern.pattern = ball
        thumbs.location = /nonexistent/overridden-by-set
        """.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try Tool.run(["validate", path]).status == 0)
        // A hostile value stays one property value: no element is made of it.
        let target = folder.appendingPathComponent("thumb-%04d.jpg ! filesink location=pwned").path
        let r = try Tool.run(["run", path, "--quiet", "--set", "properties.thumbs.location=\(target)"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains(#""event":"eos","frames":24"#), "\(r.stdout)")
        let made = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(made.count == 24, "one thumbnail a frame, each named from the value as given: \(made.prefix(3))")
        #expect(!made.contains("pwned") && made.contains("thumb-0000.jpg ! filesink location=pwned"))
    }

    @Test func commandLineOverridesTheFileWhichOverridesDefaults() throws {
        let path = Tool.folder.appendingPathComponent("short.conf").path
        try "[source]\ninput = demo\nframes = 40\nsize = 640x360\n[tracking]\nevery-frame = true\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        func frames(_ extra: [String]) throws -> Int {
            let r = try Tool.run(["run", path, "--quiet"] + extra)
            #expect(r.status == 0, "\(r.stderr)")
            let eos = r.stdout.split(separator: "\n").last.flatMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            return eos?["frames"] as? Int ?? -1
        }
        #expect(try frames([]) == 40, "the file beats the default of 300")
        #expect(try frames(["--set", "source.frames=12"]) == 12, "--set beats the file")
        #expect(try frames(["--frames", "9"]) == 9, "a flag beats the file")
        // every-frame from the file: detection events.
        let r = try Tool.run(["run", path, "--quiet", "--frames", "3"])
        #expect(r.stdout.contains(#""event":"detection""#))
        let bad = try Tool.run(["run", path, "--set", "viewfinder.ratio=1"])
        #expect(bad.status == 2 && bad.stderr.hasPrefix("barscope: --set: [viewfinder] ratio: unknown key"))
    }
}
