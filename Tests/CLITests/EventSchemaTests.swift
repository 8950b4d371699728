import Barscope
import Foundation
import TestSupport
import Testing

/// `docs/events.schema.json` against the events the tool really writes: representative runs (every frame with
/// snapshots, tracked, read cycles on the conveyor, a viewfinder command, publishing to an MQTT broker and to one that
/// is away, an RTSP camera whose stream ends and comes back, then goes away for good, an RTSP re-stream, the service's
/// two event streams), every line of their event files, standard output, Server-Sent Events and MQTT messages
/// validated with the Python `jsonschema` package (Draft 2020-12). The schema is strict (no field it does not list),
/// so a field added to an event without its documentation fails here.
@Suite(.serialized, .suiteLimit) struct EventSchemaTests {
    static let schema = OpenAPITests.root.appendingPathComponent("docs/events.schema.json").path

    /// Lines tagged with where they came from.
    final class Collected {
        var lines: [(source: String, line: String)] = []
        func add(_ source: String, _ text: String) {
            for l in text.split(separator: "\n") where l.hasPrefix("{") { lines.append((source, String(l))) }
        }
    }

    /// Validates every line; returns (checked, failures, count by event type).
    static func validate(_ lines: [(source: String, line: String)]) throws -> (Int, [String], [String: Int]) {
        let folder = Tool.folder.appendingPathComponent("schema-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let input = folder.appendingPathComponent("lines.tsv")
        try lines.map { "\($0.source)\t\($0.line)" }.joined(separator: "\n").write(
            to: input, atomically: true, encoding: .utf8)
        let script = """
            import json, sys, collections, jsonschema
            schema = json.load(open(sys.argv[1]))
            jsonschema.Draft202012Validator.check_schema(schema)
            v = jsonschema.Draft202012Validator(schema)
            bad, kinds, n = [], collections.Counter(), 0
            for row in open(sys.argv[2], encoding="utf-8"):
                source, _, line = row.rstrip("\\n").partition("\\t")
                n += 1
                try:
                    e = json.loads(line)
                except ValueError as x:
                    bad.append(f"{source}: not JSON ({x}): {line[:300]}")
                    continue
                kinds[e.get("event", "?")] += 1
                errors = sorted(v.iter_errors(e), key=lambda x: x.path)
                if errors:
                    # oneOf says little: the error of the branch for this event's own type says what is wrong.
                    branch = schema["$defs"].get(e.get("event", ""))
                    detail = [x.message for x in jsonschema.Draft202012Validator(
                        dict(branch, **{"$defs": schema["$defs"]})).iter_errors(e)] if branch else ["unknown event"]
                    bad.append(f"{source}: {'; '.join(detail)[:400]}: {line[:300]}")
            print(json.dumps({"checked": n, "bad": bad, "kinds": kinds}))
            """
        let r = try Tool.shellResult(["python3", "-c", script, schema, input.path], timeout: 120)
        let object = try #require(
            try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any],
            "python3 jsonschema (scripts/setup installs it): \(r.stderr.suffix(2000))")
        return (
            object["checked"] as? Int ?? 0, object["bad"] as? [String] ?? ["no answer"],
            object["kinds"] as? [String: Int] ?? [:]
        )
    }

    /// The validator can fail: an `appeared` without its polygon, a `detection` with a field the schema does not
    /// list, and an event type it does not know are each refused.
    @Test func theSchemaRefusesWhatIsNotAnEvent() throws {
        let good =
            #"{"event":"appeared","track":1,"frame":0,"pts_ns":0,"type":"QR-Code","data":"x","quality":1,"polygon":[[1,2],[3,4]],"bounds":{"x":1,"y":2,"width":2,"height":2},"in_viewfinder":true}"#
        let (checked, bad, _) = try Self.validate([
            ("good", good), ("no polygon", good.replacingOccurrences(of: #""polygon":[[1,2],[3,4]],"#, with: "")),
            ("extra field", good.replacingOccurrences(of: #""quality":1"#, with: #""quality":1,"speed":3"#)),
            ("unknown event", #"{"event":"teleported","frame":1}"#),
        ])
        #expect(checked == 4)
        #expect(bad.count == 3, "\(bad)")
        #expect(!bad.contains { $0.hasPrefix("good:") }, "\(bad)")
    }

    @Test func everyEventTheToolWritesFitsTheSchema() throws {
        let c = Collected()
        let folder = Tool.folder.appendingPathComponent("events-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
        func file(_ name: String) -> String {
            (try? String(contentsOfFile: path(name), encoding: .utf8)) ?? ""
        }

        // Every frame, with snapshots, to a file.
        var r = try Tool.run([
            "run", "demo", "--frames", "45", "--size", "640x360", "--every-frame", "--snapshots", path("snaps"),
            "--events", path("every.jsonl"), "--quiet",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        c.add("run --every-frame --snapshots", file("every.jsonl"))

        // Tracked, on standard output.
        r = try Tool.run(["run", "demo", "--frames", "60", "--size", "640x360", "--tracked", "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        c.add("run --tracked", r.stdout)

        // Read cycles on the conveyor (its parcels: a good read, a no-read, multiple, a mismatch).
        r = try Tool.run([
            "run", "demo", "--scene", "conveyor", "--size", "960x540", "--frames", "430", "--cycles", "motion",
            "--expect", "^[0-9]{13}$", "--expect-count", "1", "--snapshots", path("cycles"), "--quiet",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        c.add("run --cycles motion", r.stdout)

        // A viewfinder command on standard input, then stop.
        let p = Process()
        p.executableURL = Tool.url
        p.arguments = [
            "run", "demo", "--live", "--frames", "0", "--size", "640x360", "--control", "-", "--events",
            path("control.jsonl"), "--quiet",
        ]
        let input = Pipe()
        p.standardInput = input
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        try waitForLine(path("control.jsonl"), containing: #""event":"appeared""#)
        input.fileHandleForWriting.write(Data("viewfinder 16:9 animate 4\n".utf8))
        try waitForLine(path("control.jsonl"), containing: #""event":"viewfinder""#)
        input.fileHandleForWriting.write(Data("pause\nresume\nstop\n".utf8))
        waitForExit(p, 30, "a run told to stop")
        #expect(p.terminationStatus == 0)
        c.add("run --control -", file("control.jsonl"))

        // Publishing: to a broker (the events as MQTT carries them, stamped with id and seq) and to one that is away.
        let broker = try Broker()
        let subscriber = try Subscriber(broker, topic: "site/#", id: "schema-watch")
        r = try Tool.run([
            "run", "demo", "--frames", "30", "--size", "320x240", "--publish", broker.url + "/site", "--spool",
            path("spool-1"), "--quiet",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        c.add("run --publish (file)", r.stdout)
        #expect(subscriber.waitFor(20) { $0.contains { $0.payload.contains(#""event":"eos""#) } })
        for m in subscriber.messages where m.topic.hasSuffix("/events") { c.add("MQTT \(m.topic)", m.payload) }
        subscriber.stop()
        broker.stop()
        r = try Tool.run([
            "run", "demo", "--frames", "30", "--size", "320x240", "--publish",
            "mqtt://127.0.0.1:\(Broker.freePort())/x",
            "--spool", path("spool-2"), "--quiet",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        c.add("run --publish (broker away)", r.stdout)

        // An RTSP camera whose stream ends (reconnected, recovered), then a server that is gone (gave up).
        let clip = path("stream.mp4")
        #expect(try Tool.run(["generate", clip, "--size", "320x240", "--frames", "30"]).status == 0)
        var rtsp: RTSPServer? = try RTSPServer(
            host: "127.0.0.1", port: 0, path: "/camera",
            launch: "( filesrc location=\(clip) ! qtdemux ! h264parse ! rtph264pay name=pay0 pt=96 )", shared: false)
        let camera = Process()
        camera.executableURL = Tool.url
        camera.arguments = [
            "run", "rtsp://127.0.0.1:\(rtsp!.port)/camera", "--reconnect-attempts", "2", "--events",
            path("rtsp.jsonl"), "--quiet",
        ]
        camera.standardOutput = FileHandle.nullDevice
        camera.standardError = FileHandle.nullDevice
        try camera.run()
        try waitForLine(path("rtsp.jsonl"), containing: #""event":"recovered""#, timeout: 60)
        rtsp = nil
        try waitForLine(path("rtsp.jsonl"), containing: #""event":"gave-up""#, timeout: 60)
        waitForExit(camera, 60, "an RTSP run that gave up")
        c.add("run rtsp://", file("rtsp.jsonl"))

        // The annotated stream re-served over RTSP.
        r = try Tool.run([
            "run", "demo", "--frames", "20", "--size", "320x240", "--serve-rtsp", "127.0.0.1:0/schema", "--quiet",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        c.add("run --serve-rtsp", r.stdout)

        // The service: an instance's Server-Sent Events and the console's stream of every instance.
        let service = try Service()
        defer { service.expectCleanExit() }
        let made = try service.request(
            "POST", "/v1/pipelines/demo/instances",
            json: ["set": ["source.frames": 60, "source.size": "320x240", "tracking.every-frame": true]])
        let id = try #require(made.object["id"] as? String, "\(made.text)")
        try service.waitFor(id, "completed") { $0["state"] as? String == "completed" }
        let sse = String(decoding: try service.stream("/v1/instances/\(id)/events?since=0", seconds: 10), as: UTF8.self)
        #expect(sse.contains(#""event":"eos""#), "\(sse.suffix(300))")
        for l in sse.split(separator: "\n") where l.hasPrefix("data: ") {
            c.add("SSE /v1/instances/ID/events", String(l.dropFirst(6)))
        }
        let all = String(decoding: try service.stream("/v1/events?backlog=1000", seconds: 2), as: UTF8.self)
        var wrapped = 0
        for l in all.split(separator: "\n") where l.hasPrefix("data: {") {
            let o = try? JSONSerialization.jsonObject(with: Data(l.dropFirst(6).utf8)) as? [String: Any]
            guard let event = o?["event"], o?["instance"] as? String == id, o?["seq"] is Int else { continue }
            let inner = try JSONSerialization.data(withJSONObject: event)
            c.add("SSE /v1/events", String(decoding: inner, as: UTF8.self))
            wrapped += 1
        }
        #expect(wrapped > 0, "\(all.prefix(500))")
        _ = try service.request("DELETE", "/v1/instances/\(id)")

        let (checked, bad, kinds) = try Self.validate(c.lines)
        print(
            "events validated against docs/events.schema.json: \(checked), by type: "
                + kinds.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        #expect(bad.isEmpty, "\(bad.count) events do not fit the schema:\n\(bad.prefix(20).joined(separator: "\n"))")
        // What these runs make: every type but `broker-disconnected` (a broker lost after it answered, which
        // PublishTests make). The RTSP run that gave up ends with its `error`.
        let expected: Set<String> = [
            "detection", "appeared", "lost", "snapshot", "viewfinder", "cycle", "state", "warning", "error",
            "reconnecting", "recovered", "gave-up", "serving", "broker-connected", "eos",
        ]
        #expect(expected.isSubset(of: Set(kinds.keys)), "not made: \(expected.subtracting(kinds.keys))")
    }

    /// Waits until the file has a line containing `text`.
    func waitForLine(_ path: String, containing text: String, timeout: Double = 30) throws {
        if pollUntil(
            timeout, every: 0.1,
            {
                (try? String(contentsOfFile: path, encoding: .utf8))?.contains(text) == true
            })
        {
            return
        }
        let s = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        throw Service.WaitFailed(description: "\(path): no line with \(text) in \(timeout) s: \(s.suffix(600))")
    }
}
