import Barscope
import Foundation
import Synchronization
import TestSupport
import Testing

/// Live runs stopped by signals, and events' readers too slow for them: the recording finishes, nothing stalls.
extension CLITests {
    /// SIGINT, SIGTERM and SIGHUP during a live recording: EOS first, so the MP4 is finished and plays back with
    /// the frames up to the signal; exit 128 + the signal. A second SIGINT stops at once.
    @Test(arguments: [(SIGINT, "INT"), (SIGTERM, "TERM"), (SIGHUP, "HUP")])
    func signalFinishesTheRecording(signal: (Int32, String)) throws {
        let mp4 = Tool.folder.appendingPathComponent("signal-\(signal.1).mp4").path
        let (p, lines) = try Tool.startLiveRecording(to: mp4)
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        // The signal once frame 60 (2 s) has been scanned: the handlers are in and the recording holds 2 s.
        let at = try #require(lines.waitFor(60) { OutputLines.detectionFrame($0) >= 60 }, "no frame 60 in a minute")
        kill(p.processIdentifier, signal.0)
        let stopped = Date()
        let seen = OutputLines.detectionFrame(lines.all[at])
        try #require(waitForExit(p, 30, "a live recording after SIG\(signal.1)"))
        #expect(Date().timeIntervalSince(stopped) < 10, "bounded wait for the file to be finished")
        #expect(p.terminationStatus == 128 + signal.0)
        // Play it back: every frame up to the signal, readable, and not much more (2 s for the signal to land).
        let frames = try Tool.framesIn(mp4)
        let least = Sanitizer.atLeast(seen, "frames the recording holds of the \(seen) before the signal")
        #expect(
            frames >= least && frames <= seen + 60,
            "\(frames) frames recorded (at least \(least)); frame \(seen) was scanned before the signal")
    }

    /// SIGKILL: no chance to finish the file, yet the fragmented MP4 plays, holding all but the last seconds.
    @Test func killedRecordingStillPlays() throws {
        let mp4 = Tool.folder.appendingPathComponent("killed.mp4").path
        let (p, lines) = try Tool.startLiveRecording(to: mp4)
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        let at = try #require(lines.waitFor(60) { OutputLines.detectionFrame($0) >= 120 }, "no frame 120 in a minute")
        let seen = OutputLines.detectionFrame(lines.all[at])
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        let frames = try Tool.framesIn(mp4)
        // At least 4 s had been scanned, so recorded; at most the last 2 s may be missing.
        let least = Sanitizer.atLeast(seen - 60, "frames the killed recording holds of the \(seen) scanned")
        #expect(frames >= least, "\(frames) frames survived (at least \(least)); frame \(seen) was scanned")
    }

    /// A reader that never reads (a full pipe): video and recording go on at the frame rate, events are dropped,
    /// and the run still ends (the last events get a bounded wait).
    @Test func slowEventsReaderNeverStallsTheVideo() throws {
        let mp4 = Tool.folder.appendingPathComponent("unread.mp4").path
        let p = Process()
        p.executableURL = Tool.url
        p.arguments = [
            "run", "demo", "--live", "--every-frame", "--frames", "150", "--size", "640x360", "--record", mp4,
            "--quiet",
        ]
        let unread = Pipe()  // never read: fills after 64 KiB
        p.standardOutput = unread
        p.standardError = FileHandle.nullDevice
        let start = Date()
        try p.run()
        if waitForExit(p, 60, "a live run whose events nobody reads") { #expect(p.terminationStatus == 0) }
        #expect(Date().timeIntervalSince(start) < 20, "150 frames at 30/s, plus at most 5 s for the last events")
        #expect(try Tool.framesIn(mp4) == 150, "every frame recorded")
        _ = unread
    }

    /// A live source's events faster than an unread pipe takes them: the queue stays bounded, the surplus is
    /// dropped and counted on standard error, memory stays flat, and the video never waits.
    @Test func unreadEventsAreDroppedCountedAndBounded() throws {
        let p = Process()
        let rss = Tool.folder.appendingPathComponent("unread-events.rss").path
        p.executableURL = URL(fileURLWithPath: "/usr/bin/time")
        p.arguments = [
            "-f", "%M", "-o", rss, Tool.url.path, "run", "demo", "--live", "--every-frame", "--frames", "2400",
            "--fps", "200", "--size", "320x240",
        ]
        let unread = Pipe()
        let err = Pipe()
        p.standardOutput = unread
        p.standardError = err
        let said = PipeDrain(err.fileHandleForReading)
        try p.run()
        try #require(waitForExit(p, 120, "a 2400-frame run whose events nobody reads"))
        pollUntil(5) { said.hasEnded }
        let summary = said.text
        #expect(p.terminationStatus == 0)
        // 2400 frames of 3 codes make up to 7200 detection events of about 300 bytes: more than the pipe's 64 KiB
        // and the writer's 4096 lines hold.
        let dropped =
            summary.split(separator: ",").last { $0.contains("events dropped") }
            .flatMap { Int($0.split(separator: " ").first ?? "") } ?? 0
        Sanitizer.plainOnly(
            "events dropped at 200 frames/s",
            because: "the instrumented scanner keeps up with few of the frames, and their events may all fit the pipe"
        ) {
            #expect(dropped > 0, "\(summary)")
        }
        let peakKB = try String(contentsOfFile: rss, encoding: .utf8).split(separator: "\n").last.flatMap { Int($0) }
        Sanitizer.plainOnly("peak resident memory below 150 MB") {
            #expect((peakKB ?? .max) < 150_000, "peak resident memory \(peakKB ?? -1) kB")
        }
        _ = unread
    }

    /// A file's (or the non-live demo's) events to a slow reader: the scan waits for it (back-pressure), nothing is
    /// dropped, memory stays flat (issue 13, defect 3).
    @Test func aSlowReaderOfAFilesEventsLosesNothing() throws {
        let args = ["run", "demo", "--every-frame", "--frames", "1500", "--size", "320x240"]
        // What the run reports, written to a file: the count to expect through the pipe.
        let file = Tool.folder.appendingPathComponent("all-events.jsonl").path
        #expect(try Tool.run(args + ["--events", file, "--quiet"]).status == 0)
        let expected = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
            .filter { $0.hasPrefix("{\"event\":\"detection\"") }.count
        #expect(expected > 4000, "the demo's codes in most frames: \(expected)")
        let p = Process()
        let rss = Tool.folder.appendingPathComponent("slow-reader.rss").path
        p.executableURL = URL(fileURLWithPath: "/usr/bin/time")
        p.arguments =
            [
                "-f", "%M", "-o", rss, Tool.url.path,
            ] + args
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        var bytes = Data()
        let reader = out.fileHandleForReading
        while true {
            // 4 KiB every 2 ms: far slower than 1500 frames scanned at full speed would write.
            let chunk = reader.readData(ofLength: 4096)
            if chunk.isEmpty { break }
            bytes.append(chunk)
            usleep(2000)  // pacing the reader: a slow consumer of the events
        }
        let summary = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("{\"event\":\"detection\"") }.count == expected)
        #expect(!summary.contains("dropped"), "\(summary)")
        #expect(lines.last?.hasPrefix("{\"event\":\"eos\"") == true)
        let peakKB = try String(contentsOfFile: rss, encoding: .utf8).split(separator: "\n").last.flatMap { Int($0) }
        Sanitizer.plainOnly("peak resident memory below 150 MB") {
            #expect((peakKB ?? .max) < 150_000, "peak resident memory \(peakKB ?? -1) kB")
        }
    }

    @Test func secondSignalStopsAtOnce() throws {
        let p = Process()
        p.executableURL = Tool.url
        p.arguments = ["run", "demo", "--live", "--frames", "0", "--size", "640x360", "--quiet"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        let lines = OutputLines(out.fileHandleForReading)
        // Codes seen: the pipeline plays (and the handlers are in). The first signal, and once the run says that it
        // is finishing, the second.
        #expect(lines.waitFor(60) { $0.contains(#""event":"appeared""#) } != nil, "no code in a minute")
        kill(p.processIdentifier, SIGINT)
        #expect(
            lines.waitFor(30) { $0.contains(#""event":"warning""#) && $0.contains("stopping") } != nil,
            "the first signal was not taken")
        kill(p.processIdentifier, SIGINT)
        let stopped = Date()
        try #require(waitForExit(p, 30, "a run after its second SIGINT"))
        #expect(Date().timeIntervalSince(stopped) < 3)
        #expect(p.terminationStatus == 130)
    }
}
