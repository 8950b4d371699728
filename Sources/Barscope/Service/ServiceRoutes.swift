import Foundation

/// The HTTP API of `barscope serve` (JSON; errors are `{"error": "one line"}` with their status):
///
///     GET    /v1/pipelines                          the named pipelines
///     POST   /v1/pipelines/{name}/instances         {"set": {"SECTION.KEY": "value"}} → 201 {"id"}
///     GET    /v1/instances, /v1/instances/{id}      status objects
///     POST   /v1/instances/{id}/control             {"command": "viewfinder 16:9 animate 8"}
///     DELETE /v1/instances/{id}                     stop (recording finished) → the final status
///     POST   /v1/instances/{id}/cycles              {"label": "..."}: a read cycle opens; DELETE: it closes
///     GET    /v1/instances/{id}/events              Server-Sent Events (id: SEQ; Last-Event-ID or ?since=)
///     GET    /v1/instances/{id}/frame.jpg           the newest annotated frame
///     GET    /v1/instances/{id}/stream.mjpg         MJPEG, at most ?fps=N (default 5)
///     GET    /v1/instances/{id}/snapshots/{file}    a PNG that --snapshots wrote
///     GET    /v1/events                             every instance's events, and `event: status` each second
///     GET    /v1/sightings                          the sightings index: ?code=&prefix=&from=&to=&instance=
///                                                   &limit=&cursor= (keyset paging, newest first); &format=csv
///     GET    /v1/sightings/recording?run=&track=   the recording of a sighting (HTTP Range: the browser seeks)
///     GET    /v1/clips?run=&track=&before=&after=   the moment of a sighting as an MP4 (cut at keyframes)
///     GET    /v1/cycles                             read cycles' results: ?result=&label=&instance=&from=&to=
///                                                   &limit= (newest first); &format=csv
///     GET    /v1/cycles/recording?run=&cycle=       the recording of a read cycle (HTTP Range)
///     GET    /v1/pool                               the shared scanning pool: workers, busy, queued, busy_share
///     GET    /v1/openapi.json                       this API as an OpenAPI 3.1 document (Service/openapi.json)
///     GET    /                                      the console (a page; its script and style beside it)
///     GET    /metrics                               Prometheus text
///     GET    /healthz                               200 ok while the main loop turns
///
/// Runs on the main loop's thread; what blocks (a stop, waiting for a frame) runs on a thread of its own and
/// answers through `MainLoop.run`.
public final class ServiceRoutes: @unchecked Sendable {
    let service: ScanService
    let streams: ServiceStreams

    /// The API's OpenAPI 3.1 document, compiled in: every route, parameter, body and answer of this file.
    static let openAPI = PackageResources.openapi_json

    public init(service: ScanService) {
        self.service = service
        streams = ServiceStreams(service: service)
    }

    public func handle(_ r: HTTPRequest, _ x: HTTPExchange) {
        let c = r.components
        switch (r.method, c.count, c.first) {
        case ("GET", 0, _): asset(Console.page, "text/html; charset=utf-8", x)
        case ("GET", 1, "console.js"): asset(Console.script, "text/javascript; charset=utf-8", x)
        case ("GET", 1, "console.css"): asset(Console.style, "text/css; charset=utf-8", x)
        case ("GET", 1, "healthz"): x.respond(200, contentType: "text/plain", body: Array("ok\n".utf8))
        case ("GET", 1, "metrics"):
            x.respond(200, contentType: "text/plain; version=0.0.4", body: Array(PrometheusText.render(service).utf8))
        case (_, _, "v1") where c.count >= 2: api(r, x)
        default: x.error(404, "no route \(r.method) /\(c.joined(separator: "/"))")
        }
    }

    private func asset(_ bytes: [UInt8], _ type: String, _ x: HTTPExchange) {
        x.respond(
            200, contentType: type, body: bytes,
            headers: [
                ("Content-Security-Policy", Console.securityPolicy), ("X-Content-Type-Options", "nosniff"),
                ("Cache-Control", "no-cache"),
            ])
    }

    private func api(_ r: HTTPRequest, _ x: HTTPExchange) {
        let c = Array(r.components.dropFirst())
        for name in c.dropFirst() where !ScanService.isValidName(name) {
            x.error(400, "'\(name)': names and ids are letters, digits, '.', '_', '-' (at most 64)")
            return
        }
        switch (r.method, c.count, c[0]) {
        case ("GET", 1, "pipelines"):
            x.json(
                200,
                .array(
                    service.pipelines().map {
                        .object([
                            ("name", .string($0.name)), ("description", $0.description.map { .string($0) } ?? .null),
                        ])
                    }))
        case ("POST", 3, "pipelines") where c[2] == "instances": create(c[1], r, x)
        case ("GET", 1, "instances"): x.json(200, .array(service.instances.map(\.status)))
        case ("GET", 1, "pool"):
            let p = ScanPool.shared.status
            x.json(
                200,
                .object([
                    ("workers", .int(ScanPool.shared.workers)), ("busy", .int(p.busy)), ("queued", .int(p.queued)),
                    ("streams", .int(p.lanes)), ("busy_share", .double((p.busyShare * 1000).rounded() / 1000)),
                    ("busy_seconds", .double((p.busySeconds * 1000).rounded() / 1000)),
                ]))
        case ("GET", 1, "openapi.json"):
            x.respond(200, contentType: "application/json", body: Self.openAPI)
        case ("GET", 1, "sightings"): sightings(r, x)
        case ("GET", 2, "sightings") where c[1] == "recording": recording(r, x)
        case ("GET", 1, "clips"): clip(r, x)
        case ("GET", 1, "cycles"): cycles(r, x)
        case ("GET", 2, "cycles") where c[1] == "recording": cycleRecording(r, x)
        case ("GET", 1, "events"):
            let backlog = r.query["backlog"].flatMap { Int($0) } ?? 100
            streams.allEvents(backlog: min(max(backlog, 0), 1000), x)
        case (_, 2..., "instances"):
            guard let instance = service.instance(c[1]) else {
                x.error(404, "no instance '\(c[1])'")
                return
            }
            instanceRoute(r.method, Array(c.dropFirst(2)), instance, r, x)
        default: x.error(404, "no route \(r.method) /v1/\(c.joined(separator: "/"))")
        }
    }

    private func instanceRoute(
        _ method: String, _ rest: [String], _ i: ServiceInstance, _ r: HTTPRequest, _ x: HTTPExchange
    ) {
        switch (method, rest.first) {
        case ("GET", nil): x.json(200, i.status)
        case ("DELETE", nil):
            x.deferAnswer()
            let service = self.service
            Thread.detachNewThread {
                let answer: (Int, JSONValue)
                do { answer = (200, try service.delete(i.id)) } catch ScanService.Failure.timedOut(let m) {
                    answer = (504, .object([("error", .string(m))]))
                } catch ScanService.Failure.notFound(let m) {
                    // Deleted by another request while this one waited.
                    answer = (404, .object([("error", .string(m))]))
                } catch {
                    answer = (500, .object([("error", .string("\(error)"))]))
                }
                MainLoop.run { x.json(answer.0, answer.1) }
            }
        case ("POST", "control"):
            guard let body = object(r, x) else { return }
            guard let command = body["command"] as? String, body.count == 1 else {
                x.error(400, "expected {\"command\": \"...\"}, one of the --control commands")
                return
            }
            do {
                try i.controller.perform(command)
                x.json(200, i.status)
            } catch {
                x.error(400, "control '\(command)': \(error)")
            }
        case ("POST", "cycles") where rest.count == 1, ("DELETE", "cycles") where rest.count == 1:
            // A read cycle opens (body {"label": "..."}, optional) or closes, as `cycle start` / `cycle end`.
            guard let body = object(r, x) else { return }
            if let unknown = body.keys.first(where: { $0 != "label" }) {
                x.error(400, "unknown field '\(unknown)' (only \"label\")")
                return
            }
            do {
                if method == "POST" {
                    guard body["label"] == nil || body["label"] is String else {
                        x.error(400, "\"label\": expected a string")
                        return
                    }
                    try i.controller.cycles.start(label: body["label"] as? String)
                    x.json(201, i.status)
                } else {
                    try i.controller.cycles.end()
                    x.json(200, i.status)
                }
            } catch {
                x.error(409, "\(error)")
            }
        case ("GET", "events"):
            let since = r.headers["Last-Event-ID"].flatMap { Int($0) } ?? r.query["since"].flatMap { Int($0) } ?? 0
            streams.events(i, since: since, x)
        case ("GET", "frame.jpg"): streams.frame(i, x)
        case ("GET", "snapshots") where rest.count == 2: streams.snapshot(i, name: rest[1], x)
        case ("GET", "stream.mjpg"):
            let fps = r.query["fps"].flatMap { Double($0) } ?? 5
            guard fps >= 0.1, fps <= 30 else {
                x.error(400, "fps '\(r.query["fps"] ?? "")': from 0.1 to 30")
                return
            }
            streams.mjpeg(i, fps: fps, x)
        default: x.error(404, "no route \(method) /v1/instances/\(i.id)/\(rest.joined(separator: "/"))")
        }
    }

    /// `GET /v1/sightings`: a page of the index as JSON (`{"sightings": [...], "next": CURSOR|null}`) or CSV (the
    /// next page's cursor in the `Barscope-Next-Cursor` header).
    private func sightings(_ r: HTTPRequest, _ x: HTTPExchange) {
        var q = SightingQuery()
        do {
            q.code = r.query["code"].flatMap { $0.isEmpty ? nil : $0 }
            if let p = r.query["prefix"], !p.isEmpty {
                // `prefix=TEXT` searches by the start of a code; `prefix=true` with `code` does too.
                if p == "true" || p == "1" {
                    q.prefix = true
                } else {
                    q.code = p
                    q.prefix = true
                }
            }
            if q.prefix && q.code == nil { throw BarscopeError.badValue("prefix: the start of a code is needed") }
            let w = try Self.window(r)
            (q.from, q.to, q.camera) = (w.from, w.to, w.instance)
            if let limit = w.limit { q.limit = limit }
            if let c = r.query["cursor"], !c.isEmpty {
                guard let cursor = SightingQuery.Cursor(c) else {
                    throw BarscopeError.badValue("cursor '\(c)': not one this service gave")
                }
                q.cursor = cursor
            }
        } catch let e as BarscopeError {
            x.error(400, e.description)
            return
        } catch {
            x.error(400, "\(error)")
            return
        }
        // The query runs off the main loop: a database that is slow or away never stalls the API.
        let service = self.service
        let csv = r.query["format"] == "csv"
        let query = q
        x.deferAnswer()
        Thread.detachNewThread {
            let answer = Result { try service.sightings(query) }
            MainLoop.run { Self.answer(answer, csv: csv, x) }
        }
    }

    private static func answer(_ result: Result<SightingPage, Error>, csv: Bool, _ x: HTTPExchange) {
        let page: SightingPage
        switch result {
        case .success(let p): page = p
        case .failure(let error):
            x.error(503, "the sightings index: \(error)")
            return
        }
        if csv {
            let text = ([Sighting.csvHeader] + page.sightings.map(\.csv)).joined(separator: "\r\n") + "\r\n"
            x.respond(
                200, contentType: "text/csv; charset=utf-8", body: Array(text.utf8),
                headers: page.next.map { [("Barscope-Next-Cursor", $0.text)] } ?? [])
            return
        }
        x.json(
            200,
            .object([
                ("sightings", .array(page.sightings.map(\.json))),
                ("next", page.next.map { .string($0.text) } ?? .null),
            ]))
    }

    /// What the index's queries share: `from` and `to` (ISO 8601 or relative), `instance`, `limit` (1 to 1000).
    private static func window(_ r: HTTPRequest) throws -> (from: Date?, to: Date?, instance: String?, limit: Int?) {
        let from = try r.query["from"].flatMap { $0.isEmpty ? nil : try TimeArgument.parse($0) }
        let to = try r.query["to"].flatMap { $0.isEmpty ? nil : try TimeArgument.parse($0) }
        var limit: Int? = nil
        if let l = r.query["limit"] {
            guard let n = Int(l), (1...1000).contains(n) else {
                throw BarscopeError.badValue("limit '\(l)': a whole number from 1 to 1000")
            }
            limit = n
        }
        return (from, to, r.query["instance"].flatMap { $0.isEmpty ? nil : $0 }, limit)
    }

    /// `GET /v1/cycles`: read cycles' results from the index, newest first, as JSON (`{"cycles": [...]}`) or CSV.
    private func cycles(_ r: HTTPRequest, _ x: HTTPExchange) {
        var q = CycleQuery()
        do {
            if let result = r.query["result"], !result.isEmpty {
                guard CycleResult.Outcome(rawValue: result) != nil else {
                    throw BarscopeError.badValue("result '\(result)': one of good, noread, multiple, mismatch")
                }
                q.result = result
            }
            q.label = r.query["label"].flatMap { $0.isEmpty ? nil : $0 }
            let w = try Self.window(r)
            (q.from, q.to, q.camera) = (w.from, w.to, w.instance)
            if let limit = w.limit { q.limit = limit }
        } catch {
            x.error(400, (error as? BarscopeError)?.description ?? "\(error)")
            return
        }
        let service = self.service
        let csv = r.query["format"] == "csv"
        let query = q
        x.deferAnswer()
        Thread.detachNewThread {
            let answer = Result { try service.cycles(query) }
            MainLoop.run {
                switch answer {
                case .failure(let error): x.error(503, "the sightings index: \(error)")
                case .success(let rows) where csv:
                    let text = ([CycleRow.csvHeader] + rows.map(\.csv)).joined(separator: "\r\n") + "\r\n"
                    x.respond(200, contentType: "text/csv; charset=utf-8", body: Array(text.utf8))
                case .success(let rows): x.json(200, .object([("cycles", .array(rows.map(\.json)))]))
                }
            }
        }
    }

    /// `GET /v1/sightings/recording?run=R&track=T`: the recording file the index names for that sighting (no other
    /// file: the index is the list of what may be read), with byte ranges (`Range: bytes=A-B`, answered 206 in
    /// pieces of at most 4 MB) so that a browser's video element seeks to the moment.
    private func recording(_ r: HTTPRequest, _ x: HTTPExchange) {
        guard let run = r.query["run"], !run.isEmpty, let track = r.query["track"].flatMap({ Int($0) }) else {
            x.error(400, "run and track: the sighting whose recording is wanted")
            return
        }
        let service = self.service
        serveRecording(named: "sighting \(run)/\(track)", r, x) {
            try service.sightings(SightingQuery(limit: 1, run: run, track: track)).sightings.first?.recording
        }
    }

    /// `GET /v1/cycles/recording?run=R&cycle=N`: the recording a read cycle was made in, as a sighting's.
    private func cycleRecording(_ r: HTTPRequest, _ x: HTTPExchange) {
        guard let run = r.query["run"], !run.isEmpty, let number = r.query["cycle"].flatMap({ Int($0) }) else {
            x.error(400, "run and cycle: the read cycle whose recording is wanted")
            return
        }
        var q = CycleQuery()
        (q.run, q.cycle, q.limit) = (run, number, 1)
        let service = self.service
        serveRecording(named: "cycle \(run)/\(number)", r, x) { [q] in try service.cycles(q).first?.recording }
    }

    /// Answers with the bytes of the file `lookup` finds in the index, off the main loop.
    private func serveRecording(
        named name: String, _ r: HTTPRequest, _ x: HTTPExchange, lookup: @escaping @Sendable () throws -> String?
    ) {
        let range = r.headers["Range"]
        x.deferAnswer()
        Thread.detachNewThread {
            let answer: RecordingAnswer
            do { answer = Self.recordingAnswer(path: try lookup(), of: name, range: range) } catch {
                answer = .failure(503, "the sightings index: \(error)")
            }
            MainLoop.run {
                switch answer {
                case .failure(let status, let message): x.error(status, message)
                case .bytes(let status, let type, let body, let headers):
                    x.respond(status, contentType: type, body: body, headers: headers)
                }
            }
        }
    }

    enum RecordingAnswer {
        case failure(Int, String)
        case bytes(Int, String, [UInt8], [(String, String)])
    }

    static func recordingAnswer(path: String?, of name: String, range: String?) -> RecordingAnswer {
        guard let path, let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int,
            let file = FileHandle(forReadingAtPath: path)
        else { return .failure(404, "no recording of \(name) on this machine") }
        defer { try? file.close() }
        let type = path.hasSuffix(".mkv") ? "video/x-matroska" : "video/mp4"
        let piece = 4 << 20
        var first = 0
        var last = size - 1
        var partial = false
        if let range, let m = range.wholeMatch(of: /bytes=(\d*)-(\d*)/) {
            partial = true
            if m.1.isEmpty, let n = Int(m.2) {
                first = max(0, size - n)  // the last n bytes
            } else {
                first = Int(m.1) ?? 0
                if let l = Int(m.2) { last = min(l, size - 1) }
            }
            guard first < size, first <= last else {
                return .failure(416, "range \(range) is outside the recording's \(size) bytes")
            }
            last = min(last, first + piece - 1)
        } else if size > 256 << 20 {
            return .failure(413, "the recording is \(size) bytes: ask for it in ranges (Range: bytes=A-B)")
        }
        do {
            try file.seek(toOffset: UInt64(first))
            let bytes = [UInt8](try file.read(upToCount: last - first + 1) ?? Data())
            var headers = [("Accept-Ranges", "bytes")]
            if partial { headers.append(("Content-Range", "bytes \(first)-\(first + bytes.count - 1)/\(size)")) }
            return .bytes(partial ? 206 : 200, type, bytes, headers)
        } catch {
            return .failure(500, "\(path): \(error)")
        }
    }

    private func create(_ pipeline: String, _ r: HTTPRequest, _ x: HTTPExchange) {
        guard let body = object(r, x) else { return }
        if let unknown = body.keys.first(where: { $0 != "set" }) {
            x.error(400, "unknown field '\(unknown)' (only \"set\")")
            return
        }
        var overrides: [(String, String)] = []
        if body["set"] != nil {
            // Typed decoding tells true from 1, which JSONSerialization's NSNumber does not on Linux.
            guard let set = try? JSONDecoder().decode(CreateBody.self, from: Data(r.body)).set else {
                x.error(400, "\"set\": expected an object of \"SECTION.KEY\": string, number or boolean")
                return
            }
            overrides = set.keys.sorted().map { ($0, set[$0]!.text) }
        }
        do {
            let instance = try service.create(pipeline: pipeline, overrides: overrides)
            x.json(201, .object([("id", .string(instance.id))]))
        } catch ScanService.Failure.notFound(let m) {
            x.error(404, m)
        } catch ScanService.Failure.badRequest(let m) {
            x.error(400, m)
        } catch {
            x.error(500, "\(error)")
        }
    }

    /// The request's body as a JSON object (an empty body is an empty object); answers 400 otherwise.
    private func object(_ r: HTTPRequest, _ x: HTTPExchange) -> [String: Any]? {
        if r.body.isEmpty { return [:] }
        guard let value = try? JSONSerialization.jsonObject(with: Data(r.body)), let object = value as? [String: Any]
        else {
            x.error(400, "the body is not a JSON object")
            return nil
        }
        return object
    }
}

/// `{"set": {"SECTION.KEY": value}}`: the values as the command line would spell them.
private struct CreateBody: Decodable {
    var set: [String: Scalar]?

    enum Scalar: Decodable {
        case text(String)
        init(from decoder: Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let b = try? c.decode(Bool.self) {
                self = .text(b ? "true" : "false")
            } else if let i = try? c.decode(Int.self) {
                self = .text(String(i))
            } else if let d = try? c.decode(Double.self) {
                self = .text(String(d))
            } else {
                self = .text(try c.decode(String.self))
            }
        }
        var text: String {
            switch self {
            case .text(let t): return t
            }
        }
    }
}
