import Barscope
import Foundation
import TestSupport
import Testing

/// `--publish mqtt://`: events to a real mosquitto (started by the test on a free loopback port), checked with
/// `mosquitto_sub` on a persistent session at QoS 1 against the JSON Lines file the same run wrote.
@Suite(.serialized, .suiteLimit) struct PublishTests {
    static func fileLines(_ path: String) -> [String] {
        FileContents.text(atPath: path)?.split(separator: "\n").map(String.init) ?? []
    }

    /// The last lines of a file, for a failure's message.
    static func tail(_ path: String, _ count: Int = 5) -> String {
        "last lines of \(path): " + fileLines(path).suffix(count).joined(separator: "\n")
    }

    static func ids(_ lines: [String]) -> [String] {
        lines.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String
        }
    }

    static func folder(_ name: String) -> String {
        let f = Tool.folder.appendingPathComponent("\(name)-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: f, withIntermediateDirectories: true)
        return f
    }

    /// Every event of a 300-frame --every-frame run arrives exactly as the JSON Lines file has it: ids, order,
    /// content; availability and status are retained.
    @Test func everyEventArrivesAsTheFileHasIt() throws {
        let broker = try Broker()
        let sub = try Subscriber(broker, topic: "bs/#", id: "check-\(UUID().uuidString)")
        let dir = Self.folder("publish")
        let events = dir + "/events.jsonl"
        let r = try Tool.run([
            "run", "demo", "--frames", "300", "--every-frame", "--size", "640x360", "--publish", broker.url + "/bs",
            "--node", "n1", "--spool", dir + "/spool", "--events", events,
        ])
        try #require(r.status == 0, "\(r.stderr)")
        let file = Self.fileLines(events)
        #expect(file.count > 600, "\(file.count) events")
        let arrived = sub.waitFor(10) { $0.filter { $0.topic == "bs/n1/demo/events" }.count >= file.count }
        let published = sub.messages.filter { $0.topic == "bs/n1/demo/events" }.map(\.payload)
        #expect(arrived)
        #expect(published == file, "\(published.count) published, \(file.count) in the file")
        // seq without gaps from 1, ids unique.
        let seqs = file.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["seq"] as? Int
        }
        #expect(seqs == Array(1...file.count))
        #expect(Set(Self.ids(file)).count == file.count)
        #expect(sub.messages.contains { $0.topic == "bs/n1/availability" && $0.payload == "online" })
        #expect(sub.messages.contains { $0.topic == "bs/n1/demo/status" })
        #expect(r.stderr.contains("\(file.count) published to mqtt://127.0.0.1:\(broker.port)/bs"), "\(r.stderr)")
    }

    /// The broker is stopped for a while during a live run and started again: the subscriber (a persistent session)
    /// ends with every event id of the JSON Lines file, in order. Duplicates are QoS 1's right (at least once): they
    /// are counted and printed, not bounded.
    @Test(arguments: [(true, 20.0), (false, 8.0)])
    func nothingIsLostWhileTheBrokerIsAway(persistence: Bool, outage: Double) throws {
        let broker = try Broker(persistence: persistence)
        let subscriber = "outage-\(UUID().uuidString)"
        var sub = try Subscriber(broker, topic: "bs/+/+/events", id: subscriber)
        let dir = Self.folder("outage")
        let events = dir + "/events.jsonl"
        let p = Process()
        p.executableURL = Tool.url
        p.arguments = [
            "run", "demo", "--live", "--frames", "0", "--every-frame", "--size", "640x360", "--fps", "10",
            "--publish", broker.url + "/bs", "--node", "n1", "--spool", dir + "/spool", "--events", events, "--quiet",
            "--control", "-",
        ]
        let control = Pipe()
        p.standardInput = control
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        func send(_ command: String) { control.fileHandleForWriting.write(Data((command + "\n").utf8)) }
        #expect(sub.waitFor(10) { $0.count > 20 }, "the subscriber got \(sub.messages.count) messages")
        // A quiet moment for the broker to go in: paused, and the subscriber has everything so far (what a broker
        // does with messages in flight to a subscriber when it is itself stopped is not barscope's to test).
        send("pause")
        // Paused once the run says so (the first "paused" is the start's, on the way to playing).
        let paused = #""state":"paused""#
        try #require(
            waitUntil(10, "the run's pause in \(events)", seen: { Self.tail(events) }) {
                Self.fileLines(events).filter { $0.contains(paused) }.count >= 2
            })
        // Every event the file holds, by id (a count can be made up by a duplicate while one is missing, and an
        // event written late, after the pause, was then in flight when the broker went down).
        #expect(
            sub.waitFor(10) { got in
                Set(Self.ids(got.map(\.payload))).isSuperset(of: Self.ids(Self.fileLines(events)))
            },
            "the subscriber got \(sub.messages.count) of \(Self.fileLines(events).count) before the broker stopped")
        broker.stop()
        sub.stop()
        let before = sub.messages.map(\.payload)
        // Events go on while the broker is away: they wait in the spool.
        send("resume")
        // The outage's length, the scenario's own (events pile up in the spool meanwhile).
        Thread.sleep(forTimeInterval: outage)  // pacing the scenario: the broker away this long, not a wait
        try broker.start()
        // The subscriber's session first (with persistence off the broker forgot it), then the spool drains once
        // barscope is back (its next try comes within its backoff, at most 30 s).
        sub = try Subscriber(broker, topic: "bs/+/+/events", id: subscriber)
        func sinceReconnected() -> [String]? {
            let after = Self.fileLines(events).drop { !$0.contains(#""event":"broker-disconnected""#) }
            return after.firstIndex { $0.contains(#""event":"broker-connected""#) }.map { Array(after[$0...]) }
        }
        try #require(
            waitUntil(40, "broker-connected after broker-disconnected in \(events)", seen: { Self.tail(events) }) {
                sinceReconnected() != nil
            })
        // Then 20 more events (2 s at 10 frames/s): published live, behind the spool's.
        #expect(
            waitUntil(20, "20 events after broker-connected", seen: { Self.tail(events) }) {
                (sinceReconnected()?.count ?? 0) > 20
            })
        kill(p.processIdentifier, SIGINT)
        try #require(waitForExit(p, 30, "a publishing run after SIGINT"))
        #expect(p.terminationStatus == 128 + SIGINT, "exit \(p.terminationStatus) after SIGINT")
        let file = Self.ids(Self.fileLines(events))
        #expect(file.count > 100)
        let drained = sub.waitFor(20) { Set(Self.ids(before + $0.map(\.payload))).isSuperset(of: file) }
        let got = Self.ids(before + sub.messages.map(\.payload))
        let missing = Set(file).subtracting(got)
        let seqOf = { (id: String) in id.split(separator: "/").last.map(String.init) ?? id }
        #expect(drained, "\(missing.count) of \(file.count) events missing: seq \(missing.map(seqOf).sorted())")
        // In order per instance, once duplicates are dropped.
        var seen = Set<String>()
        let firsts = got.filter { seen.insert($0).inserted }
        #expect(firsts.filter { Set(file).contains($0) } == file.filter { seen.contains($0) })
        print(
            "outage \(outage) s, persistence \(persistence): \(file.count) events, \(got.count - firsts.count) duplicates"
        )
        let broke = Self.fileLines(events).contains { $0.contains(#""event":"broker-disconnected""#) }
        let back = Self.fileLines(events).contains { $0.contains(#""event":"broker-connected""#) }
        #expect(broke && back)
    }

    /// kill -9 while the broker is away: the next start sends what the spool holds.
    @Test func spooledEventsSurviveKill9() throws {
        let port = Broker.freePort()
        let dir = Self.folder("kill9")
        let spool = dir + "/spool"
        let first = dir + "/first.jsonl"
        let p = Process()
        p.executableURL = Tool.url
        p.arguments = [
            "run", "demo", "--live", "--frames", "0", "--size", "640x360", "--publish", "mqtt://127.0.0.1:\(port)/bs",
            "--node", "n1", "--spool", spool, "--events", first, "--quiet",
        ]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        // What the spool holds (the events file may be a little ahead of it).
        func spoolRecords() -> [String] {
            var records: [String] = []
            let files = (try? FileManager.default.subpathsOfDirectory(atPath: spool)) ?? []
            for file in files where file.hasSuffix(".log") {
                for record in Self.fileLines(spool + "/" + file) {
                    // INDEX \t INSTANCE \t SEQ \t PAYLOAD
                    if let payload = record.split(separator: "\t", maxSplits: 3).last {
                        records.append(String(payload))
                    }
                }
            }
            return records
        }
        // Killed once the spool holds 3 events.
        #expect(
            waitUntil(30, "3 events in the spool", seen: { "\(spoolRecords().count) spooled; " + Self.tail(first) }) {
                Self.ids(spoolRecords()).count >= 3
            })
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        let spooled = spoolRecords()
        let spooledIDs = Self.ids(spooled)
        #expect(spooledIDs.count >= 3, "\(spooled.prefix(2)) \(Self.fileLines(first).prefix(2))")
        #expect(Array(Self.ids(Self.fileLines(first)).prefix(spooledIDs.count)) == spooledIDs)

        // The broker comes (on that port), and barscope starts again, briefly: the spool goes first.
        let broker = try Broker(port: port)
        let sub = try Subscriber(broker, topic: "bs/#", id: "kill9-\(UUID().uuidString)")
        let second = dir + "/second.jsonl"
        let again = try Tool.run([
            "run", "demo", "--frames", "10", "--size", "640x360", "--publish", broker.url + "/bs", "--node", "n1",
            "--spool", spool, "--events", second, "--quiet",
        ])
        #expect(again.status == 0, "\(again.stderr)")
        let arrived = sub.waitFor(10) { Set(Self.ids($0.map(\.payload))).isSuperset(of: spooledIDs) }
        #expect(
            arrived,
            "\(Set(spooledIDs).subtracting(Self.ids(sub.messages.map(\.payload))).count) spooled events missing")
        // In order, the old life's before the new one's; the new life's seq goes on after the old one's.
        let got = Self.ids(sub.messages.filter { $0.topic == "bs/n1/demo/events" }.map(\.payload))
        #expect(Array(got.prefix(spooledIDs.count)) == spooledIDs)
        let seqs = Self.fileLines(second).compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["seq"] as? Int
        }
        #expect((seqs.first ?? 0) > spooledIDs.count, "\(seqs.prefix(3))")
    }

    /// Bad input: one line and exit 2 before the pipeline starts; an unreachable broker is a warning, not a failure.
    @Test func badInput() throws {
        let cases: [([String], String)] = [
            (["--publish", "ftp://h/x"], "--publish 'ftp://h/x': unknown scheme 'ftp' (mqtt, mqtts or kafka)"),
            (["--publish", "mqtt://h:99999/x"], "--publish 'mqtt://h:99999/x': port '99999': expected 1 to 65535"),
            (["--publish", "mqtt://h"], "--publish 'mqtt://h': no topic prefix (mqtt://HOST/PREFIX)"),
            (
                ["--publish", "mqtt://u:secret@127.0.0.1:1/x", "--spool", "/proc/none"],
                "cannot make the folder (/proc/none: "
            ),
        ]
        for (extra, line) in cases {
            let r = try Tool.run(["run", "demo", "--frames", "5", "--quiet"] + extra)
            #expect(r.status == 2, "\(extra): \(r.stderr)")
            #expect(r.stderr.contains(line), "\(extra): \(r.stderr)")
            #expect(!r.stderr.contains("secret"))
            #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        }
        // One process per spool: a second one is refused before it starts.
        let shared = Self.folder("shared-spool")
        let holder = Process()
        holder.executableURL = Tool.url
        holder.arguments = [
            "run", "demo", "--live", "--frames", "0", "--quiet", "--publish", "mqtt://127.0.0.1:1/bs", "--spool",
            shared,
            "--events", "/dev/null",
        ]
        holder.standardOutput = FileHandle.nullDevice
        holder.standardError = FileHandle.nullDevice
        try holder.run()
        defer { if holder.isRunning { kill(holder.processIdentifier, SIGKILL) } }
        waitUntil(20, "the first run's spool lock") {
            FileManager.default.fileExists(atPath: shared + "/mqtt-127.0.0.1-1-bs/lock")
        }
        let second = try Tool.run(
            ["run", "demo", "--frames", "5", "--quiet", "--publish", "mqtt://127.0.0.1:1/bs", "--spool", shared])
        #expect(second.status == 2)
        #expect(second.stderr.contains("in use by another barscope"), "\(second.stderr)")

        // A wrong password: one line naming the user, never the password.
        let broker = try Broker(users: ["scanner": "right-password"])
        let wrong = try Tool.run(
            [
                "run", "demo", "--frames", "5", "--quiet", "--publish",
                "mqtt://scanner:wrong-password@127.0.0.1:\(broker.port)/bs", "--spool", Self.folder("pw"),
            ])
        #expect(wrong.status == 2, "\(wrong.stderr)")
        #expect(wrong.stderr.contains("refused user 'scanner'"), "\(wrong.stderr)")
        #expect(!wrong.stderr.contains("wrong-password"))
        // The right one, from the environment.
        setenv("BARSCOPE_MQTT_PASSWORD", "right-password", 1)
        defer { unsetenv("BARSCOPE_MQTT_PASSWORD") }
        let right = try Tool.run(
            [
                "run", "demo", "--frames", "5", "--publish", "mqtt://scanner@127.0.0.1:\(broker.port)/bs", "--spool",
                Self.folder("pw"),
            ])
        #expect(right.status == 0, "\(right.stderr)")
        // Nothing listening: the run goes on, its events spooled, one warning.
        let port = Broker.freePort()
        let away = try Tool.run(
            [
                "run", "demo", "--frames", "30", "--publish", "mqtt://127.0.0.1:\(port)/bs", "--spool",
                Self.folder("away"), "--events", "/dev/null",
            ])
        #expect(away.status == 0, "\(away.stderr)")
        #expect(away.stderr.components(separatedBy: "events wait in the spool").count == 2, "\(away.stderr)")
        #expect(away.stderr.contains("wait in the spool)"), "\(away.stderr)")
    }
}

/// `barscope serve --publish`: one connection for every instance; each instance's events on its own topic, its
/// status retained, its control topic answered; the sink's counters on /metrics.
@Suite(.serialized, .suiteLimit) struct ServePublishTests {
    @Test func instancesPublishAndAnswerTheirControlTopic() throws {
        let broker = try Broker()
        let sub = try Subscriber(broker, topic: "site/#", id: "serve-\(UUID().uuidString)")
        let spool = PublishTests.folder("serve-spool")
        let service = try Service(extra: ["--publish", broker.url + "/site", "--node", "box1", "--spool", spool])
        defer { service.expectCleanExit() }
        let made = try service.request(
            "POST", "/v1/pipelines/demo/instances",
            json: ["set": ["source.live": true, "source.frames": 0, "source.size": "640x360"]])
        let id = try #require(made.object["id"] as? String, "\(made.text)")
        #expect(
            sub.waitFor(20) {
                $0.contains { $0.topic == "site/box1/\(id)/events" && $0.payload.contains(#""event":"appeared""#) }
            })
        #expect(sub.waitFor(20) { $0.contains { $0.topic == "site/box1/\(id)/status" } })
        #expect(sub.messages.contains { $0.topic == "site/box1/availability" && $0.payload == "online" })

        // The control topic: a command, answered on control/state, and the instance paused.
        let pub = try Tool.shell(
            "mosquitto_pub -h 127.0.0.1 -p \(broker.port) -q 1 -t 'site/box1/\(id)/control/set' -m pause")
        #expect(pub == 0)
        #expect(
            sub.waitFor(10) {
                $0.contains { $0.topic == "site/box1/\(id)/control/state" && $0.payload.contains(#""ok":true"#) }
            })
        try service.waitFor(id, "paused") { $0["state"] as? String == "paused" }
        let zoom = try Tool.shell(
            "mosquitto_pub -h 127.0.0.1 -p \(broker.port) -q 1 -t 'site/box1/\(id)/control/set' -m 'zoom 2'")
        #expect(zoom == 0, "mosquitto_pub exited \(zoom)")
        #expect(
            sub.waitFor(10) {
                $0.contains {
                    $0.topic == "site/box1/\(id)/control/state" && $0.payload.contains("unknown command 'zoom'")
                }
            })

        let metrics = try service.request("GET", "/metrics").text
        let sink = "mqtt://127.0.0.1:\(broker.port)/site"
        #expect(metrics.contains(#"barscope_broker_connected{sink="\#(sink)"} 1"#), "\(metrics)")
        let published = metrics.split(separator: "\n").first {
            $0.hasPrefix(#"barscope_events_published_total{sink="\#(sink)"}"#)
        }
        #expect((published?.split(separator: " ").last.flatMap { Int($0) } ?? 0) > 0, "\(metrics)")
        #expect(metrics.contains(#"barscope_events_dropped_total{sink="\#(sink)",reason="spool-full"} 0"#))
        // The service's events (SSE ring) carry the same ids as the broker's.
        let sse = String(decoding: try service.stream("/v1/instances/\(id)/events?since=0", seconds: 1), as: UTF8.self)
        #expect(sse.contains(#""id":"box1/\#(id)/"#), "\(sse.prefix(300))")
    }
}
