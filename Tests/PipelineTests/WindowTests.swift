import Barscope
import Foundation
import TestSupport
import Testing

/// The built tool, found next to the test bundle.
func toolURL() -> URL {
    var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    while !FileManager.default.isExecutableFile(atPath: dir.appendingPathComponent("barscope").path), dir.path != "/" {
        dir.deleteLastPathComponent()
    }
    return dir.appendingPathComponent("barscope")
}

/// `--display` under a real X server (Xvfb, started here): the window sink runs the live demo to the end.
@Suite(.serialized, .suiteLimit) struct WindowTests {
    @Test func liveDemoPlaysInAWindowUnderXvfb() throws {
        let x = try XServer()
        defer { x.stop() }
        // The tool itself, as a user runs it, with DISPLAY set for it alone (never this process's environment,
        // which other tests share).
        let tool = Process()
        tool.executableURL = toolURL()
        tool.arguments = ["run", "demo", "--display", "--frames", "45", "--size", "640x360", "--events", "-"]
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = x.display
        tool.environment = environment
        let out = Pipe()
        let err = Pipe()
        tool.standardOutput = out
        tool.standardError = err
        let start = Date()
        try tool.run()
        let events = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let messages = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        tool.waitUntilExit()
        let elapsed = Date().timeIntervalSince(start)
        if tool.terminationStatus != 0 {
            x.stop()
            print("Xvfb on \(x.display) said: \(x.messages)")
        }
        #expect(tool.terminationStatus == 0, "\(messages)")
        // The window plays at the frame rate (45 frames ≈ 1.5 s), frame-accurately: every frame scanned.
        #expect(elapsed >= 1.3, "took \(elapsed) s")
        #expect(events.contains(#""event":"eos","frames":45"#), "\(events.suffix(300))")
        #expect(!events.contains(#""event":"error""#))
    }

    /// What the window shows: a screenshot of the X screen while the live demo is paused, with the viewfinder
    /// outline (magenta) where the viewfinder is and each code's box (cyan) around the code the events reported
    /// for the frame on screen.
    @Test func screenshotShowsTheViewfinderAndTheBoxes() throws {
        let x = try XServer()
        defer { x.stop() }
        let tool = Process()
        tool.executableURL = toolURL()
        tool.arguments = [
            "run", "demo", "--live", "--frames", "0", "--display", "--size", "640x360", "--every-frame", "--control",
            "-",
            "--quiet", "--style", "line-color=#FF00FF", "--style", "box-color=#00FFFF", "--style", "polygon-color=none",
            "--style", "box-fill=0", "--style", "outline-gap=0", "--style", "polygon-fill=0", "--style", "labels=off",
            "--style", "status=off",
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = x.display
        tool.environment = environment
        let input = Pipe()
        let out = Pipe()
        tool.standardInput = input
        tool.standardOutput = out
        tool.standardError = FileHandle.nullDevice
        try tool.run()
        defer { if tool.isRunning { tool.terminate() } }
        let events = PipeDrain(out.fileHandleForReading)
        func count(_ needle: String) -> Int { events.lines.filter { $0.contains(needle) }.count }
        let last = { "last events: " + events.lines.suffix(3).joined(separator: "\n") }
        try #require(waitUntil(15, "60 detections", seen: last) { count(#""event":"detection""#) >= 60 })
        input.fileHandleForWriting.write(Data("pause\n".utf8))
        // (The first "paused" is the start's, on the way to playing.)
        try #require(waitUntil(15, "the pause", seen: last) { count(#""state":"paused""#) >= 2 })
        // Paused, the window settles on the last frame that reached it: screenshots until two in a row match.
        let png = Media.folder.appendingPathComponent("window.png").path
        var shot = try x.screenshot(png: png)
        try #require(
            try waitUntil(15, "the paused window to stop changing") {
                let next = try x.screenshot(png: png)
                defer { shot = next }
                return next.pixels == shot.pixels
            })
        input.fileHandleForWriting.write(Data("stop\n".utf8))

        func isColour(_ i: Int, _ r: UInt8, _ g: UInt8, _ b: UInt8) -> Bool {
            abs(Int(shot.pixels[i * 3]) - Int(r)) < 40 && abs(Int(shot.pixels[i * 3 + 1]) - Int(g)) < 40
                && abs(Int(shot.pixels[i * 3 + 2]) - Int(b)) < 40
        }
        // The viewfinder outline: its magenta pixels span the region's size, wherever the window was put.
        let magenta = (0..<(shot.width * shot.height)).filter { isColour($0, 255, 0, 255) }
        try #require(magenta.count > 500, "no viewfinder outline on screen (\(png))")
        let outline = PixelRect(enclosing: magenta.map { Point(Double($0 % shot.width), Double($0 / shot.width)) })
        let region = try #require(Viewfinder().region(in: Size(width: 640, height: 360)))
        #expect(
            abs(outline.width - region.width) <= 3 && abs(outline.height - region.height) <= 3,
            "\(outline) vs \(region)")
        let origin = (x: outline.x - region.x, y: outline.y - region.y)  // where the window's video starts

        // The codes scanned just before the pause: a cyan box around each, on screen. The window shows a frame
        // that may lag the last one scanned by the frames queued before the sink, so each code's box must be drawn
        // (both sides, within 4 px: the line sits just outside the bounds) where one of the last frames' events
        // put it; the codes move a few pixels a frame.
        let lines = events.lines
        let detections = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["event"] as? String == "detection" }
        let lastFrame = try #require(detections.compactMap { $0["frame"] as? Int }.max())
        let recent = detections.filter { ($0["frame"] as? Int ?? -1) > lastFrame - 30 }
        // Only codes read on every one of those frames: which frame is on screen is not known, and a small code
        // missed on it would have no box there, rightly.
        let frames = Set(recent.compactMap { $0["frame"] as? Int })
        let codes = Set(recent.compactMap { $0["data"] as? String }).filter { code in
            Set(recent.filter { $0["data"] as? String == code }.compactMap { $0["frame"] as? Int }) == frames
        }
        #expect(!codes.isEmpty, "no code read on every one of the last frames")
        func cyanNear(_ x: Int, _ y: Int) -> Bool {
            (x - 4...x + 4).contains { px in
                px >= 0 && px < shot.width && y >= 0 && y < shot.height && isColour(y * shot.width + px, 0, 255, 255)
            }
        }
        for code in codes {
            let boxes = recent.filter { $0["data"] as? String == code }.compactMap { $0["bounds"] as? [String: Int] }
            let drawn = boxes.contains { b in
                let left = origin.x + b["x"]!
                let right = left + b["width"]! - 1
                let cy = origin.y + b["y"]! + b["height"]! / 2
                return cyanNear(left, cy) && cyanNear(right, cy)
            }
            let seen = recent.filter { $0["data"] as? String == code }.suffix(4).map {
                "\($0["frame"] ?? "?"): \($0["bounds"] ?? "?")"
            }
            #expect(drawn, "\(code): no cyan box on screen where the last frames put it (\(png)): \(seen)")
        }
        try #require(waitUntil(15, "barscope to end after 'stop'", seen: last) { !tool.isRunning })
        #expect(tool.terminationStatus == 0)
    }
}
