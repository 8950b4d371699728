import Barscope
import Foundation
import TestSupport
import Testing

/// Read cycles on the conveyor scene, whose truth is known: parcels one at a time through the viewfinder, in fours
/// (one EAN-13, none, two EAN-13s, a wrong CODE-128). With `--expect '^[0-9]{13}$' --expect-count 1` they are good,
/// noread, multiple and mismatch.
@Suite(.serialized, .suiteLimit) struct CycleTests {
    static let size = Size(width: 960, height: 540)
    static let fps = 30
    static let scene = DemoScene(size: size, fps: fps, kind: .conveyor)
    static let viewfinder = Viewfinder().region(in: size)!

    /// The frames during which a parcel's box is wholly inside the viewfinder, by parcel.
    static func windows(frames: Int) -> [Int: ClosedRange<Int>] {
        var first: [Int: Int] = [:]
        var last: [Int: Int] = [:]
        for n in 0..<frames {
            for (number, box) in scene.parcels(frame: n)
            where box.x >= viewfinder.x && box.maxX <= viewfinder.maxX {
                first[number] = first[number] ?? n
                last[number] = n
            }
        }
        return first.reduce(into: [:]) { $0[$1.key] = $1.value...last[$1.key]! }
    }

    static func verdict(ofParcel n: Int) -> String { ["good", "noread", "multiple", "mismatch"][n % 4] }

    static func cycles(in lines: [String]) -> [[String: Any]] {
        lines.compactMap { line in
            guard line.contains(#""event":"cycle""#) else { return nil }
            return try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        }
    }

    /// The conveyor at 960x540 as an H.264 clip.
    static func conveyorClip(_ name: String, frames: Int) throws -> String {
        let clip = Tool.folder.appendingPathComponent(name).path
        let made = try Tool.run([
            "generate", clip, "--scene", "conveyor", "--size", "960x540", "--frames", String(frames),
        ])
        try #require(made.status == 0, "\(made.stderr)")
        return clip
    }

    static func codes(_ cycle: [String: Any]) -> Set<String> {
        Set((cycle["codes"] as? [[String: Any]] ?? []).compactMap { $0["data"] as? String })
    }

    /// `--cycles auto` on a file: a cycle for each parcel with a label (a blank parcel shows no code to open one),
    /// each with that parcel's codes and verdict; counts on the summary line.
    @Test func autoCyclesOnAFileMatchTheTruth() throws {
        let frames = 430
        let clip = try Self.conveyorClip("conveyor.mp4", frames: frames)
        let r = try Tool.run([
            "run", clip, "--cycles", "auto", "--expect", "^[0-9]{13}$", "--expect-count", "1", "--events", "-",
        ])
        try #require(r.status == 0, "\(r.stderr)")
        let cycles = Self.cycles(in: r.stdout.split(separator: "\n").map(String.init))
        let labelled = Self.windows(frames: frames).keys.sorted().filter { $0 % 4 != 1 }
        #expect(labelled == [0, 2, 3], "parcels wholly seen: \(labelled)")
        try #require(cycles.count == labelled.count, "\(cycles)")
        for (cycle, parcel) in zip(cycles, labelled) {
            #expect(cycle["result"] as? String == Self.verdict(ofParcel: parcel), "parcel \(parcel): \(cycle)")
            #expect(Self.codes(cycle) == Set(Self.scene.labels(ofParcel: parcel).map(\.text)), "parcel \(parcel)")
            #expect(cycle["closed_by"] as? String == "gap")
        }
        #expect(
            r.stderr.contains("3 cycles: 1 good, 0 noread, 1 multiple, 1 mismatch (read rate 33.3 %)"), "\(r.stderr)")
    }

    /// `--cycles motion`: the parcel without a label opens a cycle too, and is a no-read with its picture.
    @Test func motionCyclesSeeTheBlankParcel() throws {
        let clip = try Self.conveyorClip("conveyor-motion.mp4", frames: 430)
        let snapshots = Tool.folder.appendingPathComponent("motion-snapshots-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: snapshots, withIntermediateDirectories: true)
        let r = try Tool.run([
            "run", clip, "--cycles", "motion", "--expect", "^[0-9]{13}$", "--expect-count", "1", "--events", "-",
            "--snapshots", snapshots,
        ])
        try #require(r.status == 0, "\(r.stderr)")
        let cycles = Self.cycles(in: r.stdout.split(separator: "\n").map(String.init))
        #expect(
            cycles.map { $0["result"] as? String ?? "" } == ["good", "noread", "multiple", "mismatch"], "\(cycles)")
        let blank = try #require(cycles.count > 1 ? cycles[1] : nil)
        #expect(Self.codes(blank).isEmpty)
        let picture = try #require(blank["snapshot"] as? String)
        #expect(FileManager.default.fileExists(atPath: picture))
    }

    /// Commands timed to a live conveyor: each parcel's cycle opens and closes in the gaps around it (the blank
    /// parcel is a no-read); commands out of order are answered with one line and break nothing.
    @Test func commandsTimedToTheClip() throws {
        let frames = 430
        let windows = Self.windows(frames: frames)
        let parcels = windows.keys.sorted()
        try #require(parcels == [0, 1, 2, 3])
        let snapshots = Tool.folder.appendingPathComponent("cycle-snapshots-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: snapshots, withIntermediateDirectories: true)
        let p = Process()
        p.executableURL = Tool.url
        p.arguments = [
            "run", "demo", "--scene", "conveyor", "--live", "--size", "960x540", "--frames", String(frames),
            "--expect", "^[0-9]{13}$", "--expect-count", "1", "--control", "-", "--quiet", "--snapshots", snapshots,
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
        try #require(lines.waitFor(20) { $0.contains(#""state":"playing""#) } != nil)
        let start = Date()
        // Out of order first: an end with no cycle open, then two starts.
        send("cycle end")
        #expect(lines.waitFor(5) { $0.contains("cycle end: no cycle is open") } != nil)
        // Each parcel's cycle from the middle of the gap before it to the middle of the gap after it.
        var plan: [(frame: Int, command: String)] = []
        for (k, n) in parcels.enumerated() {
            let before =
                k == 0
                ? max(0, windows[n]!.lowerBound - 20)
                : (windows[parcels[k - 1]]!.upperBound + windows[n]!.lowerBound) / 2
            let after =
                k + 1 < parcels.count
                ? (windows[n]!.upperBound + windows[parcels[k + 1]]!.lowerBound) / 2
                : min(frames - 5, windows[n]!.upperBound + 20)
            plan.append((before, "cycle start parcel \(n)"))
            plan.append((after, "cycle end"))
        }
        var doubled = false
        for step in plan {
            let due = start.addingTimeInterval(Double(step.frame) / Double(Self.fps))
            // Each command at its frame's time of the live clip.
            Thread.sleep(forTimeInterval: max(0, due.timeIntervalSinceNow))  // pacing the commands, not a wait
            send(step.command)
            if !doubled && step.command.hasPrefix("cycle start") {
                send("cycle start again")
                doubled = true
            }
        }
        #expect(lines.waitFor(5) { $0.contains("a cycle ('parcel 0') is open") } != nil)
        #expect(lines.waitFor(30) { $0.contains(#""event":"eos""#) } != nil)
        input.fileHandleForWriting.closeFile()
        waitForExit(p, 30, "a run whose commands ended")
        #expect(p.terminationStatus == 0)
        let cycles = Self.cycles(in: lines.all)
        try #require(cycles.count == 4, "\(cycles)")
        for (cycle, parcel) in zip(cycles, parcels) {
            #expect(cycle["label"] as? String == "parcel \(parcel)")
            #expect(cycle["result"] as? String == Self.verdict(ofParcel: parcel), "parcel \(parcel): \(cycle)")
            #expect(Self.codes(cycle) == Set(Self.scene.labels(ofParcel: parcel).map(\.text)), "parcel \(parcel)")
            #expect(cycle["closed_by"] as? String == "command")
            // Every verdict comes with the picture that shows it, the no-read's too (what the camera saw).
            let picture = try #require(cycle["snapshot"] as? String, "parcel \(parcel)")
            #expect(FileManager.default.fileExists(atPath: picture), "\(picture)")
        }
    }

    /// The service: a cycle opened and closed over HTTP is counted in the status and on /metrics; commands out of
    /// order are 409 with one line; after the end of the stream no cycle starts.
    @Test func cyclesOverHTTP() throws {
        let service = try Service()
        defer { service.expectCleanExit() }
        let made = try service.request(
            "POST", "/v1/pipelines/demo/instances",
            json: ["set": ["source.live": true, "source.frames": 0, "source.size": "640x360"]])
        let id = try #require(made.object["id"] as? String, "\(made.text)")
        try service.waitFor(id, "playing") { $0["state"] as? String == "playing" }
        #expect(try service.request("DELETE", "/v1/instances/\(id)/cycles").status == 409)
        let opened = try service.request("POST", "/v1/instances/\(id)/cycles", json: ["label": "p1"])
        #expect(opened.status == 201, "\(opened.text)")
        let framesAtOpen = try service.request("GET", "/v1/instances/\(id)").object["frames"] as? Int ?? 0
        let twice = try service.request("POST", "/v1/instances/\(id)/cycles", json: ["label": "p2"])
        let refused = twice.text
        #expect(twice.status == 409)
        #expect(refused.contains("a cycle ('p1') is open"), "\(refused)")
        // The cycle sees the demo's codes: a second of frames scanned while it is open.
        try service.waitFor(id, "30 frames scanned in the open cycle") {
            $0["frames"] as? Int ?? 0 >= framesAtOpen + 30
        }
        #expect(try service.request("DELETE", "/v1/instances/\(id)/cycles").status == 200)
        let status = try service.waitFor(id, "one cycle counted") {
            ($0["cycles"] as? [String: Any])?["total"] as? Int == 1
        }
        let cycles = try #require(status["cycles"] as? [String: Any])
        // The demo's codes in the 4:3 viewfinder: three right codes with no --expect, so good.
        #expect(cycles["good"] as? Int == 1, "\(cycles)")
        let metrics = try service.request("GET", "/metrics").text
        #expect(metrics.contains(#"barscope_read_cycles_total{instance="\#(id)",result="good"} 1"#), "\(metrics)")

        let short = try service.request(
            "POST", "/v1/pipelines/demo/instances", json: ["set": ["source.frames": 30, "source.size": "640x360"]])
        let ended = try #require(short.object["id"] as? String, "\(short.text)")
        try service.waitFor(ended, "completed") { $0["state"] as? String == "completed" }
        let late = try service.request("POST", "/v1/instances/\(ended)/cycles", json: [:])
        let lateText = late.text
        #expect(late.status == 409)
        #expect(lateText.contains("the stream has ended"), "\(lateText)")
    }
}
