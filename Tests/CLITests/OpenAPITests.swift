import Barscope
import Foundation
import TestSupport
import Testing

/// The service's OpenAPI document (`Sources/Barscope/Service/openapi.json`, served at `GET /v1/openapi.json`) held
/// against the service: it is valid OpenAPI 3.1 (`openapi-spec-validator`); every operation it names is answered by a
/// real `barscope serve` as it says; every route the service answers is in it; and schemathesis's generated requests
/// get no answer outside it, no 5xx, no crash, with the service and its instance untouched afterwards.
@Suite(.serialized, .suiteLimit) struct OpenAPITests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")
        .standardized
    static let documentPath = root.appendingPathComponent("Sources/Barscope/Service/openapi.json").path

    static func document() throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: documentPath))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// Every operation: method (upper case), path template, operationId, documented statuses and content types.
    struct Operation {
        var method: String
        var path: String
        var id: String
        var statuses: Set<Int>
        var types: Set<String>
    }

    static func operations(_ doc: [String: Any]) -> [Operation] {
        var out: [Operation] = []
        let responses = (doc["components"] as? [String: Any])?["responses"] as? [String: Any] ?? [:]
        for (path, item) in (doc["paths"] as? [String: Any] ?? [:]) {
            for (method, op) in (item as? [String: Any] ?? [:]) where ["get", "post", "delete"].contains(method) {
                let o = op as? [String: Any] ?? [:]
                var statuses = Set<Int>()
                var types = Set<String>()
                for (code, r) in (o["responses"] as? [String: Any] ?? [:]) {
                    statuses.insert(Int(code) ?? 0)
                    var answer = r as? [String: Any] ?? [:]
                    if let ref = answer["$ref"] as? String {
                        answer = responses[String(ref.split(separator: "/").last!)] as? [String: Any] ?? [:]
                    }
                    types.formUnion((answer["content"] as? [String: Any] ?? [:]).keys)
                }
                out.append(
                    Operation(
                        method: method.uppercased(), path: path, id: o["operationId"] as? String ?? "",
                        statuses: statuses, types: types))
            }
        }
        return out.sorted { ($0.path, $0.method) < ($1.path, $1.method) }
    }

    /// Whether `python3` (the one scripts/setup installs packages for) imports `module`.
    static func python(has module: String) -> Bool {
        ((try? Tool.shellResult(["python3", "-c", "import \(module)"]))?.status ?? 1) == 0
    }

    // MARK: The document

    @Test func theDocumentIsValidOpenAPIAndIsWhatTheServiceServes() throws {
        let checked = try Tool.shellResult(["python3", "-m", "openapi_spec_validator", Self.documentPath])
        #expect(
            checked.status == 0,
            "openapi-spec-validator (scripts/setup installs it from scripts/requirements.txt): \(checked.stdout) \(checked.stderr)"
        )
        // The validator can fail: the same document with an operation that has no answers is refused.
        var broken = try Self.document()
        var paths = broken["paths"] as! [String: Any]
        var health = paths["/healthz"] as! [String: Any]
        var get = health["get"] as! [String: Any]
        get["responses"] = "none"
        health["get"] = get
        paths["/healthz"] = health
        broken["paths"] = paths
        let brokenPath = Tool.folder.appendingPathComponent("openapi-broken-\(UUID().uuidString).json").path
        try JSONSerialization.data(withJSONObject: broken).write(to: URL(fileURLWithPath: brokenPath))
        let refused = try Tool.shellResult(["python3", "-m", "openapi_spec_validator", brokenPath])
        #expect(refused.status != 0, "openapi-spec-validator took a document with an operation without answers")

        let service = try Service()
        defer { service.expectCleanExit() }
        let served = try service.request("GET", "/v1/openapi.json")
        #expect(served.status == 200)
        #expect(served.headers["content-type"]?.hasPrefix("application/json") == true, "\(served.headers)")
        let file = try Data(contentsOf: URL(fileURLWithPath: Self.documentPath))
        #expect(served.body == file, "GET /v1/openapi.json is not the document in the tree")
    }

    // MARK: Routes

    /// What the tree says the service answers, apart from the document: `serve --help`'s route lines and the route
    /// table at the top of ServiceRoutes.swift. Each is `METHOD /path` with its placeholders as `{}`.
    static func routesNamedElsewhere() throws -> [(String, String, String)] {
        var out: [(String, String, String)] = []
        func add(_ text: String, _ source: String) {
            for line in text.split(separator: "\n") {
                let t = line.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "///", with: "")
                    .trimmingCharacters(in: .whitespaces)
                guard let m = t.firstMatch(of: /^((?:GET|POST|DELETE)(?:,\s*(?:GET|POST|DELETE))*)\s+(\/\S*)(.*)$/)
                else { continue }
                var paths = [String(m.2)]
                // `/v1/instances, /v1/instances/{id}` and `/v1/instances[/ID]`: two routes.
                if String(m.2).hasSuffix(","), let second = String(m.3).split(separator: " ").first {
                    paths = [String(String(m.2).dropLast()), String(second)]
                }
                if paths[0].contains("[/ID]") {
                    paths = [
                        paths[0].replacingOccurrences(of: "[/ID]", with: ""),
                        paths[0].replacingOccurrences(of: "[/ID]", with: "/ID"),
                    ]
                }
                // "POST ... DELETE: it closes": the same path under DELETE too.
                var methods = String(m.1).split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                if String(m.3).contains("DELETE:") || String(m.3).contains("DELETE closes") { methods.append("DELETE") }
                for p in paths {
                    let template = p.split(separator: "?")[0].split(separator: "/").map { part -> String in
                        let s = String(part)
                        return s == s.uppercased() && s.count > 1 && !s.contains(".") || s.hasPrefix("{") ? "{}" : s
                    }
                    for method in methods {
                        out.append((method, "/" + template.joined(separator: "/"), source))
                    }
                }
            }
        }
        add(try Tool.run(["serve", "--help"]).stdout, "barscope serve --help")
        let routes = root.appendingPathComponent("Sources/Barscope/Service/ServiceRoutes.swift")
        let head = try String(contentsOf: routes, encoding: .utf8).components(separatedBy: "public final class")[0]
        add(head, "ServiceRoutes.swift")
        return out
    }

    static func template(_ path: String) -> String {
        path.replacingOccurrences(of: #"\{[^}]+\}"#, with: "{}", options: .regularExpression)
    }

    @Test func everyRouteItNamesIsAnsweredAndEveryRouteAnsweredIsInIt() throws {
        let doc = try Self.document()
        let operations = Self.operations(doc)
        let documented = Set(operations.map { "\($0.method) \(Self.template($0.path))" })
        // The routes the help and the route table name are all in the document.
        let named = try Self.routesNamedElsewhere()
        #expect(named.count >= 20, "\(named)")
        for (method, path, source) in named {
            #expect(documented.contains("\(method) \(path)"), "\(source) names \(method) \(path): not in openapi.json")
        }

        let snapshots = Tool.folder.appendingPathComponent("openapi-snaps-\(UUID().uuidString)").path
        let recording = Tool.folder.appendingPathComponent("openapi-rec-\(UUID().uuidString).mp4").path
        let service = try Service()
        defer { service.expectCleanExit() }
        let made = try service.request(
            "POST", "/v1/pipelines/demo/instances",
            json: [
                "set": [
                    "source.live": true, "source.frames": 0, "source.size": "640x360", "snapshots.folder": snapshots,
                    "record.path": recording, "cycles.mode": "commands",
                ]
            ])
        let id = try #require(made.object["id"] as? String, "\(made.text)")
        try service.waitFor(id, "playing") { $0["state"] as? String == "playing" }
        // A snapshot and a sighting with its recording, for the routes that serve them.
        var snapshot: String? = nil
        var sighting: [String: Any]? = nil
        try pollUntil(30, every: 0.2) {
            snapshot = (try? FileManager.default.contentsOfDirectory(atPath: snapshots))?.first { $0.hasSuffix(".png") }
            let page = try service.request("GET", "/v1/sightings?instance=\(id)&limit=5").object
            sighting = (page["sightings"] as? [[String: Any]])?.first { $0["recording"] != nil }
            return snapshot != nil && sighting != nil
        }
        let snap = try #require(snapshot, "no snapshot in 30 s")
        let row = try #require(sighting, "no sighting with a recording in 30 s")
        let run = try #require(row["run"] as? String)
        let track = try #require(row["track"] as? Int)
        var second: String? = nil

        // Every operation, as the document gives it: a documented status and content type.
        var answered: [String] = []
        let order = [
            "createInstance", "startCycle", "endCycle", "listCycles", "cycleRecording", "controlInstance",
            "deleteInstance",
        ]
        let sorted = operations.sorted {
            (order.firstIndex(of: $0.id) ?? -1, $0.path) < (order.firstIndex(of: $1.id) ?? -1, $1.path)
        }
        for op in sorted {
            var path = op.path.replacingOccurrences(of: "{name}", with: "demo")
                .replacingOccurrences(of: "{file}", with: snap)
            path = path.replacingOccurrences(of: "{id}", with: op.id == "deleteInstance" ? (second ?? "none") : id)
            var body: Any? = nil
            var headers: [String: String] = [:]
            var streaming = false
            switch op.id {
            case "createInstance": body = ["set": ["source.frames": 30, "source.size": "320x240"]]
            case "controlInstance": body = ["command": "region 0.1,0.1,0.8,0.8"]
            case "startCycle": body = ["label": "parcel 1"]
            case "endCycle": body = nil
            case "searchSightings": path += "?code=\(row["code"] as? String ?? "")&limit=2"
            case "sightingRecording":
                path += "?run=\(run)&track=\(track)"
                headers["Range"] = "bytes=0-1023"
            case "exportClip": path += "?run=\(run)&track=\(track)&before=1&after=1"
            case "listCycles": path += "?instance=\(id)&limit=5"
            case "cycleRecording":
                // The cycle just closed, once the index's writer has it.
                var cycle: [String: Any]? = nil
                _ = try pollUntil(20, every: 0.2) {
                    let rows = try service.request("GET", "/v1/cycles?instance=\(id)").object["cycles"]
                    cycle = (rows as? [[String: Any]])?.first { $0["recording"] != nil }
                    return cycle != nil
                }
                path += "?run=\(cycle?["run"] as? String ?? "none")&cycle=\(cycle?["cycle"] as? Int ?? -1)"
                headers["Range"] = "bytes=0-1023"
            case "instanceEvents", "allEvents", "instanceMJPEG": streaming = true
            default: break
            }
            let at = "\(op.method) \(path) [\(op.id)]"
            if streaming {
                let answer = try service.streamed(path, seconds: 2)
                #expect(!answer.body.isEmpty, "\(at): nothing streamed")
                #expect(op.statuses.contains(answer.status), "\(at): answered \(answer.status)")
                let type = String(answer.type.split(separator: ";").first ?? "")
                #expect(op.types.contains(type), "\(at): answered \(type), not one of \(op.types)")
                answered.append(op.id)
                continue
            }
            var r = try service.request(op.method, path, json: body, headers: headers)
            // A live sighting's moment is in its recording once the recording has caught up (a fragment a second).
            if op.id == "exportClip" && r.status == 503 {
                try pollUntil(20, every: 0.5) {
                    r = try service.request(op.method, path, json: body, headers: headers)
                    return r.status != 503
                }
            }
            #expect((200..<300).contains(r.status) && op.statuses.contains(r.status), "\(at): \(r.status) \(r.text)")
            let type = (r.headers["content-type"] ?? "").split(separator: ";")[0]
            #expect(op.types.contains(String(type)), "\(at): answered \(type), not one of \(op.types)")
            if op.id == "createInstance" { second = r.object["id"] as? String }
            answered.append(op.id)
        }
        #expect(
            Set(answered) == Set(operations.map(\.id)),
            "not answered: \(Set(operations.map(\.id)).subtracting(answered))")

        // Every method on every documented path, and paths beside them: what is not documented is not answered.
        let concrete = Set(
            operations.map {
                $0.path.replacingOccurrences(of: "{name}", with: "demo").replacingOccurrences(of: "{id}", with: id)
                    .replacingOccurrences(of: "{file}", with: snap)
            }
        ).union([
            "/v1", "/v1/instances/\(id)/unknown", "/v1/pipelines/demo", "/v1/sightings/other", "/v1/cycles/other",
            "/index.html",
            "/v2/pipelines", "/v1/instances/\(id)/cycles/1", "/v1/instances/\(id)/snapshots", "/console",
        ])
        var probes = 0
        for path in concrete.sorted() {
            for method in ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] {
                let op = operations.first {
                    $0.method == method
                        && path.wholeMatch(
                            of: try! Regex(
                                "^"
                                    + $0.path.replacingOccurrences(
                                        of: #"\{[^}]+\}"#, with: "[^/]+", options: .regularExpression) + "$")
                        ) != nil
                }
                guard op == nil else { continue }
                // Never stop the instance under test by a probe (a DELETE of it is documented and skipped above).
                let r = try service.request(method, path)
                probes += 1
                #expect(
                    r.status == 404 || r.status == 405, "\(method) \(path): \(r.status) \(r.text): not in openapi.json")
                #expect(r.object["error"] is String, "\(method) \(path): no error object: \(r.text)")
            }
        }
        #expect(probes > 100)
        let status = try service.request("GET", "/v1/instances/\(id)").object
        #expect(status["state"] as? String == "playing", "\(status)")
        _ = try service.request("DELETE", "/v1/instances/\(id)")
        print("openapi: \(answered.count) documented operations answered, \(probes) undocumented method/path pairs 404")
    }

    // MARK: Generated requests

    /// schemathesis (PyPI) sends requests generated from the document (its examples, the coverage phase's edge and
    /// negative values, then random ones) to a live service running one live instance, and checks each answer's
    /// status, content type, headers and body against the document, and that none is a 5xx. Bounded: at most 30
    /// cases an operation in the examples and coverage phases, random ones until 120 s in all, one worker, loopback
    /// only. `GET /v1/events` is left out: it is endless by design (every instance's events until the client goes),
    /// so every request to it would end in a timeout; the route test above answers it. After the run the service
    /// still answers, its instance is the same one, still playing, never restarted, its viewfinder where it was and
    /// no read cycle opened; the service exits 0 at SIGTERM.
    @Test(
        .enabled(
            if: OpenAPITests.python(has: "schemathesis"),
            "schemathesis (PyPI) is not installed for python3: scripts/setup installs it from scripts/requirements.txt"
        ))
    func generatedRequestsGetDocumentedAnswers() throws {
        // The service's pipelines: a small finite demo, so that what the generated requests start ends by itself.
        let pipelines = Tool.folder.appendingPathComponent("openapi-pipelines-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: pipelines, withIntermediateDirectories: true)
        try """
        [pipeline]
        description = A small demo for generated requests
        [source]
        input = demo
        size = 320x240
        fps = 15
        frames = 15
        """.write(to: pipelines.appendingPathComponent("demo.conf"), atomically: true, encoding: .utf8)
        let service = try Service(extra: ["--pipelines", pipelines.path])
        defer { service.expectCleanExit() }
        let made = try service.request(
            "POST", "/v1/pipelines/demo/instances",
            json: ["set": ["source.live": true, "source.frames": 0, "cycles.mode": "commands"]])
        let id = try #require(made.object["id"] as? String, "\(made.text)")
        let before = try service.waitFor(id, "playing") { $0["state"] as? String == "playing" }

        let report = Tool.folder.appendingPathComponent("schemathesis-\(UUID().uuidString)")
        // No values taken from the answers: schemathesis would find the instance's id in `GET /v1/instances` and
        // pause, stop or delete it, as the API allows; the instance routes' answers to a real id are the route
        // test's (above), the generated requests' are to ids that name no instance.
        let config = Tool.folder.appendingPathComponent("schemathesis-\(UUID().uuidString).toml")
        try ["examples", "coverage", "fuzzing"].map { "[phases.\($0).extra-data-sources]\nresponses = false\n" }
            .joined().write(to: config, atomically: true, encoding: .utf8)
        let r = try Tool.shellResult(
            [
                "schemathesis", "--config-file", config.path, "run", "\(service.base)/v1/openapi.json", "--url",
                service.base,
                "--checks",
                "not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,"
                    + "response_schema_conformance",
                "--phases", "examples,coverage,fuzzing", "--max-examples", "30", "--max-time", "120",
                "--request-timeout", "10", "--workers", "1", "--seed", "45", "--exclude-path", "/v1/events",
                "--suppress-health-check", "all", "--report", "ndjson", "--report-dir", report.path,
                "--output-truncate", "false",
            ], folder: Tool.folder, timeout: 400)
        let output = r.stdout + r.stderr
        // How many requests it sent: one `ScenarioFinished`/recorded interaction per case in its event log.
        let log = (try? FileManager.default.contentsOfDirectory(atPath: report.path))?.first { $0.hasSuffix(".ndjson") }
        let events =
            log.flatMap { try? String(contentsOfFile: report.appendingPathComponent($0).path, encoding: .utf8) } ?? ""
        let requests = events.components(separatedBy: "\"request\":").count - 1
        let summary = output.split(separator: "\n").filter {
            $0.contains("Test cases") || $0.contains("passed") || $0.contains("failed") || $0.contains("Seed")
        }
        print("schemathesis: \(requests) requests; \(summary.joined(separator: " | "))")
        #expect(r.status == 0, "schemathesis found something (exit \(r.status)):\n\(output.suffix(12000))")
        #expect(requests >= 100, "only \(requests) requests were sent:\n\(output.suffix(3000))")

        // The service is alive, and its instance untouched.
        #expect(service.process.isRunning, "the service died: \(service.stderr.suffix(3000))")
        let health = try service.request("GET", "/healthz")
        #expect(health.status == 200)
        let after = try service.waitFor(id, "more frames") {
            ($0["frames"] as? Int ?? 0) > (before["frames"] as? Int ?? 0) + 30
        }
        #expect(after["state"] as? String == "playing", "\(after)")
        #expect(after["restarts"] as? Int == 0, "\(after)")
        #expect(after["error"] is NSNull, "\(after)")
        #expect(
            (after["viewfinder"] as? NSDictionary) == (before["viewfinder"] as? NSDictionary), "\(before) -> \(after)")
        #expect((after["cycles"] as? [String: Any])?["total"] as? Int ?? 0 == 0, "\(after)")
        // What the generated requests started (finite demos) is stopped; ours last.
        let all = try service.request("GET", "/v1/instances").json as? [[String: Any]] ?? []
        #expect(all.contains { $0["id"] as? String == id })
        for other in all.compactMap({ $0["id"] as? String }) where other != id {
            let stopped = try service.request("DELETE", "/v1/instances/\(other)")
            #expect(stopped.status == 200, "\(stopped.text)")
        }
        let stopped = try service.request("DELETE", "/v1/instances/\(id)")
        #expect(stopped.status == 200, "\(stopped.text)")
    }
}
