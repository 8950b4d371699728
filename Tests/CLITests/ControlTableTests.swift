import Foundation
import TestSupport
import Testing

/// One table of control commands driven through the three channels that carry them: standard input
/// (`run --control -`), HTTP (`POST /v1/instances/ID/control`) and MQTT (`…/control/set` of `serve --publish`).
/// Every valid command changes what it says, checked on the events that follow (written to a file: `--events` for
/// a run, `[events] path` for a service instance); every invalid one is answered with one line naming the fault on
/// that channel (a `warning` event, a 400, `"ok":false` on `control/state`) and changes nothing.
///
/// Commands are applied in the order given, so a command whose effect no event shows (`engine`, `style`) is
/// known to be taken when the next command's effect arrives with no warning about it in between.
@Suite(.serialized, .suiteLimit) struct ControlTableTests {
    /// What follows a valid command in the events.
    enum Effect {
        /// A `viewfinder` event whose region has this width:height.
        case aspect(Double)
        /// A `viewfinder` event with exactly this region (x, y, width, height).
        case region([Int])
        /// A `viewfinder` event with no region: the whole frame.
        case wholeFrame
        /// Twenty detections in a row, all of this type.
        case onlyType(String)
        /// A detection of another type than this.
        case notOnly(String)
        /// A `state` event.
        case state(String)
        /// A `cycle` event with this label.
        case cycle(String)
        /// Nothing an event shows: taken if no warning names it before the next command's effect.
        case quiet
        /// The run ends: an `eos` event.
        case ends
    }

    /// The frame is 640x480 (4:3), so a 16:9 viewfinder differs from the whole frame's shape.
    static let valid: [(String, Effect)] = [
        ("viewfinder 16:9", .aspect(16.0 / 9)),
        ("viewfinder 4:3 animate 4", .aspect(4.0 / 3)),
        ("region 0.0,0.0,0.5,1.0", .region([0, 0, 320, 480])),
        ("viewfinder off", .wholeFrame),
        ("symbologies disable qrcode.enable", .onlyType("QR-Code")),
        ("symbologies enable", .notOnly("QR-Code")),
        ("engine zxing", .quiet),
        ("style box-color=#FF0000 labels=off", .quiet),
        ("engine zbar", .quiet),
        ("cycle start dock-1", .quiet),
        ("cycle end", .cycle("dock-1")),
        ("pause", .state("paused")),
        ("resume", .state("playing")),
        ("stop", .ends),
    ]

    /// Invalid commands and a part of the one line that must name their fault.
    static let invalid: [(String, String)] = [
        ("zoom 2", "unknown command 'zoom'"),
        ("viewfinder 16:0", "viewfinder '16:0': expected W:H"),
        ("viewfinder 4:3 animate x", "animate: expected a whole number of frames"),
        ("viewfinder", "expected one value"),
        ("region 2,0,1,1", "region '2,0,1,1': expected x,y,w,h"),
        ("symbologies bogus.enable", "-S 'bogus.enable': unknown symbology or setting"),
        ("engine fast", "engine 'fast': expected zbar, zxing or both"),
        ("style size=3", "style 'size': unknown"),
        ("style box-color=red", "style box-color='red': expected #RRGGBB"),
        ("cycle middle", "expected 'cycle start [LABEL]' or 'cycle end'"),
        ("cycle end", "cycle end: no cycle is open"),
    ]

    /// A channel: sends a command, and says what it answered (nil: it answers nothing itself, standard input).
    struct Channel {
        let name: String
        let events: OutputLines
        let send: (String) throws -> (ok: Bool, error: String)?
    }

    static func json(_ line: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }

    /// Follows an events file as it grows (tail -F), each line once.
    static func follow(_ path: String) throws -> (Process, OutputLines) {
        let tail = Process()
        tail.executableURL = URL(fileURLWithPath: "/usr/bin/tail")
        tail.arguments = ["-n", "+1", "-F", path]
        let out = Pipe()
        tail.standardOutput = out
        tail.standardError = FileHandle.nullDevice
        try tail.run()
        return (tail, OutputLines(out.fileHandleForReading))
    }

    /// Runs the whole table through one channel, in order.
    static func drive(_ channel: Channel) throws {
        let events = channel.events
        let started = try #require(
            events.waitFor(30) { $0.contains(#""event":"detection""#) }, "\(channel.name): no detection at all")
        func warning(after start: Int, naming command: String) -> Int? {
            events.all[start...].firstIndex {
                $0.contains(#""event":"warning""#) && $0.contains("control '\(command)'")
            }
        }

        // Invalid commands: one line naming the fault, and nothing changes (no viewfinder event follows them).
        let beforeInvalid = events.all.count
        var mark = beforeInvalid
        for (command, fault) in invalid {
            let answer = try channel.send(command)
            if let answer {
                #expect(!answer.ok, "\(channel.name): '\(command)' was taken")
                #expect(answer.error.contains(fault), "\(channel.name): '\(command)' answered \(answer.error)")
                #expect(!answer.error.contains("\n"), "\(channel.name): more than one line: \(answer.error)")
            } else {
                let line = events.waitFor(10, from: mark) {
                    $0.contains(#""event":"warning""#) && $0.contains("control '\(command)'")
                }
                let found = try #require(line, "\(channel.name): no warning for '\(command)'")
                #expect(events.all[found].contains(fault), "\(channel.name): \(events.all[found])")
                mark = found + 1
            }
        }
        _ = started
        // Nothing changed: no viewfinder or state event came after the invalid batch began.
        let changes = events.all[beforeInvalid...].filter { line in
            [#""event":"viewfinder""#, #""event":"state""#].contains { line.contains($0) }
        }
        #expect(changes.isEmpty, "\(channel.name): invalid commands changed something: \(changes.prefix(3))")

        // Valid commands, each checked by what follows it.
        var previous: (command: String, from: Int)? = nil
        for (command, effect) in valid {
            let from = events.all.count
            if let answer = try channel.send(command) {
                #expect(answer.ok, "\(channel.name): '\(command)' refused: \(answer.error)")
            }
            let seen: Int?
            switch effect {
            case .aspect(let ratio):
                seen = events.waitFor(20, from: from) { line in
                    guard line.contains(#""event":"viewfinder""#), let r = json(line)?["region"] as? [String: Int],
                        let w = r["width"], let h = r["height"], h > 0
                    else { return false }
                    return abs(Double(w) / Double(h) - ratio) < 0.03
                }
            case .region(let want):
                seen = events.waitFor(20, from: from) { line in
                    guard line.contains(#""event":"viewfinder""#), let r = json(line)?["region"] as? [String: Int]
                    else { return false }
                    return [r["x"], r["y"], r["width"], r["height"]] == want.map { $0 }
                }
            case .wholeFrame:
                seen = events.waitFor(20, from: from) { line in
                    line.contains(#""event":"viewfinder""#) && json(line)?["region"] is NSNull
                }
            case .onlyType(let type):
                var run = 0
                seen = events.waitFor(30, from: from) { line in
                    guard line.contains(#""event":"detection""#), let t = json(line)?["type"] as? String else {
                        return false
                    }
                    run = t == type ? run + 1 : 0
                    return run >= 20
                }
            case .notOnly(let type):
                seen = events.waitFor(30, from: from) { line in
                    line.contains(#""event":"detection""#)
                        && (json(line)?["type"] as? String).map { $0 != type } == true
                }
            case .state(let state):
                seen = events.waitFor(20, from: from) {
                    $0.contains(#""event":"state""#) && $0.contains("\"\(state)\"")
                }
            case .cycle(let label):
                seen = events.waitFor(20, from: from) { line in
                    line.contains(#""event":"cycle""#) && (json(line)?["label"] as? String) == label
                }
            case .quiet:
                seen = from
            case .ends:
                seen = events.waitFor(30, from: from) { $0.contains(#""event":"eos""#) }
            }
            let at = try #require(seen, "\(channel.name): '\(command)' changed nothing in the events")
            // The command before, taken quietly or not, drew no warning up to here.
            if let p = previous {
                #expect(
                    warning(after: p.from, naming: p.command) == nil,
                    "\(channel.name): '\(p.command)' drew a warning")
            }
            #expect(warning(after: from, naming: command) == nil, "\(channel.name): '\(command)' drew a warning")
            previous = (command, at)
        }
    }

    @Test func standardInput() throws {
        let file = Tool.folder.appendingPathComponent("control-stdin-\(UUID().uuidString).jsonl").path
        #expect(FileManager.default.createFile(atPath: file, contents: nil))
        let (tail, events) = try Self.follow(file)
        defer { tail.terminate() }
        let p = Process()
        p.executableURL = Tool.url
        p.arguments = [
            "run", "demo", "--live", "--frames", "0", "--size", "640x480", "--every-frame", "--control", "-",
            "--events", file, "--quiet",
        ]
        let input = Pipe()
        p.standardInput = input
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { p.terminate() } }
        try Self.drive(
            Channel(name: "stdin", events: events) { command in
                input.fileHandleForWriting.write(Data((command + "\n").utf8))
                return nil
            })
        try #require(waitForExit(p, 30, "a run told to stop"))
        #expect(p.terminationStatus == 0, "a stop command ends the run normally")
    }

    /// A service instance with its events in a file (`[events] path`, which the service once dropped).
    static func instance(_ service: Service, events file: String) throws -> String {
        let made = try service.request(
            "POST", "/v1/pipelines/demo/instances",
            json: [
                "set": [
                    "source.live": true, "source.frames": 0, "source.size": "640x480", "tracking.every-frame": true,
                    "events.path": file,
                ]
            ])
        #expect(made.status == 201, "\(made.text)")
        return try #require(made.object["id"] as? String, "\(made.text)")
    }

    @Test func http() throws {
        let service = try Service()
        defer { service.expectCleanExit() }
        let file = Tool.folder.appendingPathComponent("control-http-\(UUID().uuidString).jsonl").path
        let id = try Self.instance(service, events: file)
        let (tail, events) = try Self.follow(file)
        defer { tail.terminate() }
        try Self.drive(
            Channel(name: "http", events: events) { command in
                let r = try service.request("POST", "/v1/instances/\(id)/control", json: ["command": command])
                return (r.status == 200, r.object["error"] as? String ?? "")
            })
        // Stopped by the table's last command: the instance says so.
        let status = try service.waitFor(id) { $0["state"] as? String == "stopped" }
        #expect(status["state"] as? String == "stopped")
    }

    @Test func mqtt() throws {
        let broker = try Broker()
        let sub = try Subscriber(broker, topic: "site/box1/+/control/state", id: "table-\(UUID().uuidString)")
        let service = try Service(extra: [
            "--publish", broker.url + "/site", "--node", "box1", "--spool",
            Tool.folder.appendingPathComponent("control-spool-\(UUID().uuidString)").path,
        ])
        defer { service.expectCleanExit() }
        let file = Tool.folder.appendingPathComponent("control-mqtt-\(UUID().uuidString).jsonl").path
        let id = try Self.instance(service, events: file)
        let (tail, events) = try Self.follow(file)
        defer { tail.terminate() }
        try Self.drive(
            Channel(name: "mqtt", events: events) { command in
                let before = sub.messages.count
                let quoted = command.replacingOccurrences(of: "'", with: "'\\''")
                let published = try Tool.shell(
                    "mosquitto_pub -h 127.0.0.1 -p \(broker.port) -q 1 -t 'site/box1/\(id)/control/set' -m '\(quoted)'")
                #expect(published == 0)
                // Each command is answered on control/state, in order.
                #expect(sub.waitFor(20) { $0.count > before }, "mqtt: no answer to '\(command)'")
                guard sub.messages.count > before,
                    let answer = Self.json(sub.messages[before].payload)
                else { return (false, "no answer") }
                return (answer["ok"] as? Bool == true, answer["error"] as? String ?? "")
            })
    }
}
