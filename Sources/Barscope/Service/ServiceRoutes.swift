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
    // Sendable: its fields are set once in init; the routes run on the main loop's thread.
    let service: ScanService
    let streams: ServiceStreams

    /// The API's OpenAPI 3.1 document, compiled in: every route, parameter, body and answer of these routes.
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

extension ServiceRoutes {
    /// Runs `query` off the main loop (a database or a file that is slow or away never stalls the API) and hands its
    /// answer to `answer` on the main loop; a failure is a 503 naming the index.
    static func offMainLoop<T: Sendable>(
        _ x: HTTPExchange, _ query: @escaping @Sendable () throws -> T, answer: @escaping @Sendable (T) -> Void
    ) {
        x.deferAnswer()
        Thread.detachNewThread {
            let result = Result { try query() }
            MainLoop.run {
                switch result {
                case .success(let value): answer(value)
                case .failure(let error): x.error(503, "the sightings index: \(error)")
                }
            }
        }
    }
}
