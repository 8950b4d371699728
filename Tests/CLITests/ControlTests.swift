import Barscope
import Foundation
import TestSupport
import Testing

/// `--control -`: commands on standard input change a running pipeline (viewfinder, pause, resume, stop).
@Suite(.serialized, .suiteLimit) struct ControlTests {
    @Test func commandsChangeTheRunningPipeline() throws {
        let p = Process()
        p.executableURL = Tool.url
        p.arguments = [
            "run", "demo", "--live", "--frames", "0", "--size", "640x360", "--every-frame", "--control", "-",
            "--quiet",
        ]
        let input = Pipe()
        let output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { p.terminate() } }
        let lines = OutputLines(output.fileHandleForReading)
        func send(_ command: String) { input.fileHandleForWriting.write(Data((command + "\n").utf8)) }

        #expect(lines.waitFor(10) { $0.contains(#""event":"detection""#) } != nil)
        send("region 0.0,0.0,0.5,1.0")
        let changed = try #require(lines.waitFor(5) { $0.contains(#""event":"viewfinder""#) })
        let event = try #require(
            try JSONSerialization.jsonObject(with: Data(lines.all[changed].utf8)) as? [String: Any])
        let region = try #require(event["region"] as? [String: Int])
        #expect(region == ["x": 0, "y": 0, "width": 320, "height": 360], "\(region)")
        // Detections of the frames from the change on lie in the left half (earlier frames still being scanned
        // may report theirs after the change's event).
        let changedFrame = try #require(event["frame"] as? Int)
        let after = try #require(
            lines.waitFor(5, from: changed + 1) { line in
                guard line.contains(#""event":"detection""#),
                    let d = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                else { return false }
                return (d["frame"] as? Int ?? -1) >= changedFrame
            })
        let d = try #require(try JSONSerialization.jsonObject(with: Data(lines.all[after].utf8)) as? [String: Any])
        let bounds = try #require(d["bounds"] as? [String: Int])
        #expect(bounds["x"]! + bounds["width"]! <= 320, "\(bounds)")

        send("pause")
        let paused = try #require(lines.waitFor(5, from: changed) { $0.contains(#""state":"paused""#) })
        send("resume")
        #expect(lines.waitFor(5, from: paused) { $0.contains(#""state":"playing""#) } != nil)
        send("zoom 2")
        #expect(
            lines.waitFor(5) { $0.contains(#""event":"warning""#) && $0.contains("control 'zoom 2': unknown command") }
                != nil)
        send("stop")
        try #require(waitForExit(p, 15, "a run told to stop"))
        #expect(p.terminationStatus == 0, "a stop command ends the run normally")
        #expect(lines.waitFor(2) { $0.contains(#""event":"eos""#) } != nil)
    }

    /// `--control FIFO`: every writer's commands are read, as a PLC's script writes them (`echo "pause" > FIFO`,
    /// later `echo "resume" > FIFO`: each opens, writes and closes it). The reader used to end at the first
    /// writer's close, so every command after the first was lost.
    @Test func aFifoTakesTheCommandsOfEveryWriter() throws {
        let folder = Tool.folder.appendingPathComponent("fifo-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let fifo = folder.appendingPathComponent("dock.ctl").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let events = folder.appendingPathComponent("events.jsonl").path
        let p = Process()
        p.executableURL = Tool.url
        p.arguments = [
            "run", "demo", "--live", "--frames", "0", "--size", "320x240", "--control", fifo, "--events", events,
            "--quiet",
        ]
        try p.run()
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        func text() -> String { (try? String(contentsOfFile: events, encoding: .utf8)) ?? "" }
        /// One writer: opens the FIFO (once the run reads it), writes the line, closes it.
        func write(_ line: String) {
            var fd: Int32 = -1
            pollUntil(20, every: 0.02) {
                fd = open(fifo, O_WRONLY | O_NONBLOCK)
                return fd >= 0 || !p.isRunning
            }
            guard fd >= 0 else {
                Issue.record("'\(line)': nothing reads \(fifo) (\(text().suffix(200)))")
                return
            }
            let bytes = Array((line + "\n").utf8)
            #expect(Foundation.write(fd, bytes, bytes.count) == bytes.count)
            close(fd)
        }
        func waitFor(_ what: String, _ condition: (String) -> Bool) {
            #expect(pollUntil(20) { condition(text()) }, "\(what) did not come: \(text().suffix(300))")
        }
        waitFor("playing") { $0.contains(#""state":"playing""#) }
        write("pause")
        waitFor("the pause") { $0.contains(#""state":"paused""#) }
        write("resume")
        waitFor("playing again") { t in
            guard let paused = t.range(of: #""state":"paused""#, options: .backwards) else { return false }
            return t[paused.upperBound...].contains(#""state":"playing""#)
        }
        write("stop")
        #expect(pollUntil(20) { !p.isRunning }, "the third writer's stop was not read")
        if !p.isRunning { #expect(p.terminationStatus == 0) }
        #expect(text().contains(#""event":"eos""#))
    }
}
