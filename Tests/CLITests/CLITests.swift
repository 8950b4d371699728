import Barscope
import Foundation
import Synchronization
import TestSupport
import Testing

@Suite(.serialized, .suiteLimit) struct CLITests {
    @Test func helpAndVersion() throws {
        let help = try Tool.run(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("barscope run [NAME|FILE.conf|demo|FILE|URI]"))
        #expect(help.stdout.contains("Exit codes"))
        let runHelp = try Tool.run(["run", "--help"])
        #expect(runHelp.status == 0 && runHelp.stdout.contains("--every-frame") && runHelp.stdout.contains("--record"))
        #expect(runHelp.stdout.contains("--format F") && runHelp.stdout.contains("a still image"))
        let version = try Tool.run(["--version"])
        #expect(version.status == 0 && version.stdout.hasPrefix("barscope "))
    }

    @Test func scanMissingFile() throws {
        let r = try Tool.run(["scan", "/nonexistent/label.png"])
        #expect(r.status == 2)
        #expect(r.stderr == "barscope: /nonexistent/label.png: no such file\n")
        #expect(r.stdout.isEmpty)
    }

    @Test func scanTextFileNamedPng() throws {
        let path = Tool.folder.appendingPathComponent("notes.png").path
        try "shopping list: milk, eggs\n".write(toFile: path, atomically: true, encoding: .utf8)
        let r = try Tool.run(["scan", path])
        #expect(r.status == 2)
        #expect(r.stderr.hasPrefix("barscope: \(path): not an image"), "\(r.stderr)")
        #expect(r.stderr.filter { $0 == "\n" }.count == 1, "one line")
    }

    @Test func scanFindsTextAndJson() throws {
        let path = Tool.folder.appendingPathComponent("ean.png").path
        try DemoClip.writePNG(try EAN13.symbol("987654321012"), to: path)
        let r = try Tool.run(["scan", path])
        #expect(r.status == 0)
        #expect(r.stdout == "EAN-13:9876543210128\n")
        let j = try Tool.run(["scan", "--json", path])
        #expect(j.status == 0)
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [String: Any])
        #expect(obj["type"] as? String == "EAN-13")
        #expect(obj["data"] as? String == "9876543210128")
        #expect((obj["quality"] as? Int ?? 0) >= 90)
        #expect((obj["polygon"] as? [[Double]])?.count == 4)
        // zbarimg's -S syntax: with EAN-13 disabled nothing is found (exit 4).
        let off = try Tool.run(["scan", "-Sean13.disable", path])
        #expect(off.status == 4)
        #expect(off.stdout.isEmpty)
    }

    @Test func scanJoinsTheStructuredAppendItsImagesHold() throws {
        let message = "Four QR codes, one message: the parts name their index, the count and the parity. End!"
        let parts = try QRCode.structuredAppend(message, version: 2)
        #expect(parts.count == 4)
        let parity = String(message.utf8.reduce(0, ^))
        #expect(parity == "15")
        let files = try parts.enumerated().map { i, symbol in
            let path = Tool.folder.appendingPathComponent("sa-part-\(i).png").path
            try DemoClip.writePNG(symbol, to: path, module: 4)
            return path
        }
        // One part a file, given out of order: each part, then the joined message, naming its files in part order.
        let j = try Tool.run(["scan", "--json"] + [files[2], files[0], files[3], files[1]])
        #expect(j.status == 0, "\(j.stderr)")
        let lines = j.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 5, "\(j.stdout)")
        let objects = try lines.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        for (n, obj) in objects.prefix(4).enumerated() {
            #expect(obj["type"] as? String == "QR-Code", "\(lines[n])")
            let sequence = try #require(obj["sequence"] as? [String: Any], "\(lines[n])")
            #expect(sequence["index"] as? Int == [2, 0, 3, 1][n], "\(lines[n])")
            #expect(sequence["count"] as? Int == 4 && sequence["id"] as? String == parity, "\(lines[n])")
        }
        let joined = objects[4]
        #expect(joined["data"] as? String == message, "\(lines[4])")
        #expect(joined["type"] as? String == "QR-Code")
        #expect(joined["files"] as? [String] == [files[2], files[0], files[3], files[1]], "\(lines[4])")
        let sequence = try #require(joined["sequence"] as? [String: Any])
        #expect(sequence["joined"] as? Bool == true && sequence["count"] as? Int == 4 && sequence["index"] == nil)
        #expect(joined["polygon"] == nil)
        // All four in one picture: the four parts in text, and the message last.
        let together = Tool.folder.appendingPathComponent("sa-all.png").path
        try DemoClip.writePNG(parts, to: together, module: 4)
        let t = try Tool.run(["scan", together])
        #expect(t.status == 0, "\(t.stderr)")
        let text = t.stdout.split(separator: "\n").map(String.init)
        #expect(text.count == 5 && text.allSatisfy { $0.hasPrefix("QR-Code:") }, "\(t.stdout)")
        #expect(text.last == "QR-Code:\(message)")
        // Three of the four: the parts, and no message.
        let three = try Tool.run(["scan", files[0], files[1], files[3]])
        #expect(three.stdout.split(separator: "\n").count == 3, "\(three.stdout)")
        #expect(!three.stdout.contains(message))
    }

    @Test func scanWithoutCodeExitsFour() throws {
        let path = Tool.folder.appendingPathComponent("blank.png").path
        try DemoClip.writePNG(
            BarcodeSymbol(type: "none", text: "", modules: [[false]], quietZone: 20, barHeightModules: 40), to: path)
        let r = try Tool.run(["scan", path])
        #expect(r.status == 4)
        #expect(r.stderr == "barscope: no code found in \(path)\n")
    }

    @Test func unknownOptionsAndBadValues() throws {
        let bogus = try Tool.run(["run", "--bogus"])
        #expect(bogus.status == 2)
        #expect(bogus.stderr == "barscope: unknown option '--bogus' (see 'barscope run --help')\n")
        let cmd = try Tool.run(["frobnicate"])
        #expect(cmd.status == 2 && cmd.stderr == "barscope: unknown command 'frobnicate' (see 'barscope --help')\n")
        let whole = try Tool.run(["run", "demo", "--whole-search-every", "0"])
        #expect(
            whole.status == 2 && whole.stderr == "barscope: --whole-search-every '0': expected a whole number ≥ 1\n")
        let s = try Tool.run(["run", "-Sqrcodex.enable"])
        #expect(s.status == 2 && s.stderr.hasPrefix("barscope: -S 'qrcodex.enable': unknown symbology or setting"))
        let vf = try Tool.run(["run", "--viewfinder", "0:3"])
        #expect(
            vf.status == 2
                && vf.stderr == "barscope: --viewfinder '0:3': expected W:H with both sides positive (4:3), or 'off'\n")
        let insets = try Tool.run(["run", "--insets", "-5"])
        #expect(
            insets.status == 2
                && insets.stderr == "barscope: --insets '-5': expected N or top,left,bottom,right, each ≥ 0 pixels\n")
        let big = try Tool.run(["run", "demo", "--insets", "400"])
        #expect(big.status == 2)
        #expect(
            big.stderr
                == "barscope: viewfinder: no region fits in a 1280x720 frame with these insets (top 400, left 400, bottom 400, right 400)\n"
        )
        let both = try Tool.run(["run", "--region", "0.1,0.1,0.5,0.5", "--viewfinder", "16:9"])
        #expect(both.status == 2 && both.stderr.contains("not both"))
        let missing = try Tool.run(["run", "/nonexistent/clip.mp4"])
        #expect(missing.status == 2 && missing.stderr == "barscope: /nonexistent/clip.mp4: no such file\n")
        let value = try Tool.run(["run", "--record"])
        #expect(value.status == 2 && value.stderr == "barscope: --record needs a value\n")
    }

    /// Cameras (this machine has none): a missing device, a character device that is not a camera, a regular file
    /// named like a device, and a camera option on another source each give one line and exit 2.
    @Test func cameraErrorsAreOneLine() throws {
        let missing = try Tool.run(["run", "--input", "/dev/video99", "--size", "1280x720", "--fps", "30"])
        #expect(missing.status == 2)
        #expect(missing.stderr == "barscope: /dev/video99: no such video device\n")
        let notCamera = try Tool.run(["run", "/dev/null", "--quiet"])
        #expect(notCamera.status == 2)
        #expect(
            notCamera.stderr.hasPrefix("barscope: /dev/null: not a camera barscope can open ("), "\(notCamera.stderr)")
        #expect(notCamera.stderr.filter { $0 == "\n" }.count == 1, "one line")
        // Not under /dev: a file like any other, and this one holds no video.
        let file = Tool.folder.appendingPathComponent("video0").path
        try "not a camera\n".write(toFile: file, atomically: true, encoding: .utf8)
        let named = try Tool.run(["run", file, "--quiet"])
        #expect(
            named.status == 2 && named.stderr.hasPrefix("barscope: \(file): not a video or image"), "\(named.stderr)")
        let format = try Tool.run(["run", "demo", "--format", "YUY2"])
        #expect(
            format.status == 2 && format.stderr == "barscope: --format 'YUY2': only for a camera input (/dev/videoN)\n")
    }

    /// A still image as a run source: scanned once, or repeated into a recording that plays.
    @Test func runStillImageRecords() throws {
        let png = Tool.folder.appendingPathComponent("label.png").path
        try DemoClip.writePNG(try EAN13.symbol("987654321012"), to: png)
        let mp4 = Tool.folder.appendingPathComponent("label.mp4").path
        let r = try Tool.run(["run", png, "--record", mp4, "--frames", "45", "--viewfinder", "off"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains(#""data":"9876543210128""#))
        #expect(try Tool.framesIn(mp4) == 45)
    }

    @Test func runOnRandomBytesNamedMp4IsBadInput() throws {
        let path = Tool.folder.appendingPathComponent("random.mp4").path
        // Seeded (xorshift), so that a failure can be reproduced byte for byte.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let bytes = (0..<50_000).map { _ -> UInt8 in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let r = try Tool.run(["run", path, "--quiet"])
        #expect(r.status == 2)
        #expect(r.stderr.hasPrefix("barscope: \(path): not a video or image GStreamer can read"), "\(r.stderr)")
        // Standard output holds events only, each a JSON object, the last saying why the run ended.
        for line in r.stdout.split(separator: "\n") {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "not JSON: \(line)")
        }
        #expect(
            r.stdout.split(separator: "\n").last?.hasPrefix(#"{"event":"error","message":"\#(path): not a video"#)
                == true)
    }

    @Test func runDemoPrintsOnlyEventsAndRecords() throws {
        let mp4 = Tool.folder.appendingPathComponent("demo.mp4").path
        let r = try Tool.run(["run", "demo", "--frames", "45", "--size", "960x540", "--record", mp4, "--events", "-"])
        #expect(r.status == 0, "\(r.stderr)")
        let events = r.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(events.count == r.stdout.split(separator: "\n").count, "every line of standard output is JSON")
        let appeared = events.filter { $0["event"] as? String == "appeared" }.compactMap { $0["data"] as? String }
        #expect(Set(appeared) == ["https://barscope.dev/demo", "4006381333931", "BARSCOPE-128"])
        #expect(events.filter { $0["event"] as? String == "lost" }.count == 3)
        #expect(events.last?["event"] as? String == "eos")
        #expect(events.last?["frames"] as? Int == 45)
        #expect(r.stderr.contains("45 frames"))
        #expect(try Tool.framesIn(mp4) == 45, "the recording does not play its 45 frames")
    }

    /// --snapshots keeps the annotated frame of each new code as PNG and says so in a `snapshot` event; --style
    /// values are checked and a bad one is named.
    @Test func snapshotsAndStyle() throws {
        let folder = Tool.folder.appendingPathComponent("snaps").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let r = try Tool.run([
            "run", "demo", "--frames", "20", "--size", "960x540", "--snapshots", folder, "--style", "box-color=#FF8800",
            "--style", "label-format={type}: {data}", "--quiet",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let snapshots = r.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["event"] as? String == "snapshot" }
        #expect(snapshots.count == 1, "the three codes appear together on frame 0")
        let path = try #require(snapshots.first?["path"] as? String)
        #expect(snapshots.first?["frame"] as? Int == 0)
        let png = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a PNG")
        // The snapshot is evidence: the codes in it still scan.
        let scanned = try Tool.run(["scan", path])
        #expect(scanned.status == 0)
        #expect(scanned.stdout.contains("EAN-13:4006381333931"))
        let bad = try Tool.run(["run", "demo", "--style", "box-color=red"])
        #expect(
            bad.status == 2 && bad.stderr == "barscope: style box-color='red': expected #RRGGBB, #RRGGBBAA or none\n")
        let unknown = try Tool.run(["run", "demo", "--style", "glow=1"])
        #expect(unknown.status == 2 && unknown.stderr.hasPrefix("barscope: style 'glow': unknown (one of line-color"))
    }

    @Test func everyFrameGivesDetectionsWithStreamTimestamps() throws {
        let mp4 = Tool.folder.appendingPathComponent("clip.mp4").path
        let gen = try Tool.run(["generate", mp4, "--frames", "30", "--size", "960x540"])
        #expect(gen.status == 0, "\(gen.stderr)")
        let r = try Tool.run(["run", mp4, "--every-frame", "--viewfinder", "off", "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let detections = r.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["event"] as? String == "detection" }
        let frames = Set(detections.compactMap { $0["frame"] as? Int })
        #expect(frames == Set(0..<30))
        #expect(detections.count >= 5 * 29)
        // pts is the stream's own: x264's B-frames shift the first one; it is never rebased to zero.
        let firstPts = detections.filter { $0["frame"] as? Int == 0 }.compactMap { $0["pts_ns"] as? Int }
        let secondPts = detections.filter { $0["frame"] as? Int == 1 }.compactMap { $0["pts_ns"] as? Int }
        #expect(Set(firstPts).count == 1 && Set(secondPts).count == 1)
        #expect((firstPts.first ?? 0) > 0, "x264's B-frames delay the first pts (66.7 ms here); it is kept as is")
        if let a = firstPts.first, let b = secondPts.first { #expect(abs((b - a) - 33_333_333) <= 1) }
    }
}
