import Barscope
import Foundation
import Testing

/// `--control -`: commands on standard input change a running pipeline (viewfinder, pause, resume, stop).
@Suite(.serialized) struct ControlTests {
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
        let deadline = Date(timeIntervalSinceNow: 15)
        while p.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(!p.isRunning)
        #expect(p.terminationStatus == 0, "a stop command ends the run normally")
        #expect(lines.waitFor(2) { $0.contains(#""event":"eos""#) } != nil)
    }
}
