import Foundation
import TestSupport
import Testing

/// `barscope scan` against ZBar's own example suite (`Tests/Fixtures/zbar-examples`, copied from ZBar's
/// `examples/` with its `sha1sum`): every line's command, run with zbarimg's options, prints exactly what zbarimg
/// prints, byte for byte. Both engines read each image, so this also holds that a code read by both (or read
/// again) is printed once, in ZBar's naming.
@Suite(.suiteLimit) struct ZbarimgCompatibilityTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Fixtures/zbar-examples").standardized

    /// The suite's lines: the expected SHA-1 and zbarimg's arguments.
    static let lines: [(sha1: String, arguments: [String])] = {
        guard let text = try? String(contentsOf: folder.appendingPathComponent("sha1sum"), encoding: .utf8) else {
            return []
        }
        return text.split(separator: "\n").map { line in
            let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            // "SHA1  zbarimg OPTIONS... IMAGE"
            return (words[0], Array(words.dropFirst(2)))
        }
    }()

    static func sha1(_ data: Data) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/sha1sum")
        let input = Pipe()
        let output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        try p.run()
        input.fileHandleForWriting.write(data)
        try input.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: out, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
    }

    @Test func theSuiteHasItsNineteenLines() {
        #expect(Self.lines.count == 19)
    }

    @Test(arguments: Self.lines.map(\.arguments))
    func printsWhatZbarimgPrints(_ arguments: [String]) throws {
        let expected = try #require(Self.lines.first { $0.arguments == arguments }?.sha1)
        // The image (the last word) from the suite's folder; zbarimg's plain output names no file.
        let r = try Tool.run(
            ["scan"] + arguments.dropLast() + [Self.folder.appendingPathComponent(arguments.last!).path], timeout: 60)
        #expect(r.status == 0, "\(r.stderr)")
        let text = String(decoding: r.output.prefix(200), as: UTF8.self)
        #expect(
            try Self.sha1(r.output) == expected, "barscope scan \(arguments.joined(separator: " ")) printed \(text)")
    }

    /// zbarimg's other output options: --xml (its layout, a source per image), -q (no message when nothing is
    /// found, exit 4 still), --oneshot (an image's first code only).
    @Test func xmlQuietAndOneshot() throws {
        let codabar = Self.folder.appendingPathComponent("codabar.png").path
        let ean = Self.folder.appendingPathComponent("ean-13.png").path
        let xml = try Tool.run(["scan", "--xml", codabar])
        #expect(xml.status == 0)
        #expect(
            xml.stdout == """
                <barcodes xmlns='http://zbar.sourceforge.net/2008/barcode'>
                <source href='\(codabar)'>
                <index num='0'>
                <symbol type='Codabar' quality='39' orientation='UP'><data><![CDATA[A9876543210B]]></data></symbol>
                </index>
                </source>
                </barcodes>

                """)
        let blank = Tool.folder.appendingPathComponent("blank-\(UUID().uuidString).png").path
        #expect(
            try Tool.shell(
                "gst-launch-1.0 -q videotestsrc pattern=white num-buffers=1 ! video/x-raw,width=64,height=64 ! pngenc ! filesink location=\(blank)"
            ) == 0)
        let quiet = try Tool.run(["scan", "-q", blank])
        #expect(quiet.status == 4)
        #expect(quiet.stderr.isEmpty, "\(quiet.stderr)")
        let loud = try Tool.run(["scan", blank])
        #expect(loud.status == 4)
        #expect(loud.stderr.contains("no code found in \(blank)"))
        let raw = try Tool.run(["scan", "--raw", codabar, ean])
        #expect(raw.stdout == "A9876543210B\n9789876543217\n")
        let both = try Tool.run(["scan", "--json", "--xml", codabar])
        #expect(both.status == 2)
        #expect(both.stderr.contains("--json: not with --xml or --raw"))
    }
}
