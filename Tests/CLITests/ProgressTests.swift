import Foundation
import TestSupport
import Testing

/// The progress line: drawn in place on a terminal (a pseudo-terminal made by `script`), plain lines otherwise;
/// the one-line summary at the end either way.
@Suite(.serialized, .suiteLimit) struct ProgressTests {
    static func clip() throws -> String { try Tool.clip("progress-720p.mp4", size: "1280x720", frames: 300) }

    @Test func barOnATerminal() throws {
        let clip = try Self.clip()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        // -q quiet, -f flush, -e the child's exit status; the typescript itself goes nowhere.
        p.arguments = ["-qfec", "'\(Tool.url.path)' run '\(clip)' --events /dev/null", "/dev/null"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        // (The terminal carries the child's standard error too: a sanitizer's report, from its first line.)
        let report = text.range(of: "WARNING: ThreadSanitizer").map { String(text[$0.lowerBound...].prefix(16000)) }
        #expect(p.terminationStatus == 0, "\(report ?? String(text.suffix(2000)))")
        // Redrawn in place: carriage return and erase-line before each state of the bar.
        let redraws = text.components(separatedBy: "\r\u{1B}[K").dropFirst()
        #expect(redraws.count >= 3, "\(text.debugDescription)")
        let bars = redraws.filter { $0.contains("[#") && $0.contains(" / 0:10.0") && $0.contains("frames/s") }
        #expect(!bars.isEmpty, "\(text.debugDescription)")
        #expect(text.contains("300 frames in"), "the summary follows: \(text.debugDescription)")
    }

    @Test func plainLinesWhenNotATerminal() throws {
        // Six seconds of the live demo: one plain progress line at 5 s, then the summary.
        let r = try Tool.run(["run", "demo", "--live", "--frames", "180", "--size", "320x240", "--events", "/dev/null"])
        #expect(r.status == 0)
        #expect(!r.stderr.contains("\r") && !r.stderr.contains("\u{1B}"), "\(r.stderr.debugDescription)")
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.first?.hasPrefix("barscope: 0:0") == true && lines.first?.contains("frames/s") == true)
        // The summary: the frames scanned, and those a loaded machine's live scanner dropped; together the 180 the
        // source gave (fewer if the source itself fell behind).
        let summary = String(lines.last ?? "")
        let scanned = Self.number(before: " frames in ", in: summary)
        let dropped = Self.number(before: " frames dropped to stay live", in: summary) ?? 0
        let delivered = Sanitizer.atLeast(170, "frames of 180 the live demo must deliver")
        #expect(scanned.map { $0 + dropped <= 180 && $0 + dropped >= delivered } == true, "\(summary)")
        #expect((scanned ?? 0) >= Sanitizer.liveScanned(of: 180), "\(summary)")
    }

    /// The whole number just before `marker` in `line`.
    static func number(before marker: String, in line: String) -> Int? {
        guard let r = line.range(of: marker) else { return nil }
        return Int(line[..<r.lowerBound].split(separator: " ").last ?? "")
    }
}
