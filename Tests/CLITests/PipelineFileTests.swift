import Barscope
import Foundation
import Testing

/// Named pipelines: the shipped files validate; broken files give one line naming file, section, key and value;
/// the command line overrides the file.
@Suite(.serialized) struct PipelineFileTests {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")
        .standardized

    @Test func shippedPipelinesValidateAndAreListed() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.repo.appendingPathComponent("pipelines").path)
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
        ("[viewfinder]\naspect-ratio = 4-3\n",
         "[viewfinder] aspect-ratio: viewfinder '4-3': expected W:H with both sides positive (4:3), or 'off'"),
        ("[viewfinderx]\n", "[viewfinderx]: unknown section (one of decoder, display, events"),
        ("[source]\nsizes = 640x480\n", "[source] sizes: unknown key (one of input, size, fps, frames, live"),
        ("[source]\nfps = fast\n", "[source] fps: 'fast' is not a whole number ≥ 1"),
        ("[decoder]\nsymbologies = qrcode.enable foo.enable\n", "[decoder] symbologies: -S 'foo.enable': unknown"),
        ("[overlay]\nbox-color = green\n", "[overlay] box-color: style box-color='green': expected #RRGGBB"),
        ("[record]\nsegment-seconds = 10\n", "[record] segment-seconds: needs [record] path"),
        ("[viewfinder]\nregion = 0.1,0.1,0.5,0.5\naspect-ratio = 16:9\n", "[viewfinder]: give either region"),
        ("this is not an ini file\n", "Key file contains line"),
    ])
    func brokenFilesNameTheirFault(text: String, message: String) throws {
        let path = Tool.folder.appendingPathComponent("broken-\(abs(text.hashValue)).conf").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let r = try Tool.run(["validate", path])
        #expect(r.status == 2)
        #expect(r.stderr.hasPrefix("barscope: \(path): \(message)"), "\(r.stderr)")
        #expect(r.stderr.filter { $0 == "\n" }.count == 1)
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
