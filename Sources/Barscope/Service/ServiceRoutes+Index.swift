import Foundation

/// The index's routes: sightings and read cycles, a page at a time, as JSON or CSV (queried off the main loop).
extension ServiceRoutes {
    /// `GET /v1/sightings`: a page of the index as JSON (`{"sightings": [...], "next": CURSOR|null}`) or CSV (the
    /// next page's cursor in the `Barscope-Next-Cursor` header).
    func sightings(_ r: HTTPRequest, _ x: HTTPExchange) {
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
        } catch {
            x.error(400, (error as? BarscopeError)?.description ?? "\(error)")
            return
        }
        let (service, query, csv) = (self.service, q, r.query["format"] == "csv")
        Self.offMainLoop(x, { try service.sightings(query) }) { Self.answer($0, csv: csv, x) }
    }

    private static func answer(_ page: SightingPage, csv: Bool, _ x: HTTPExchange) {
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
    func cycles(_ r: HTTPRequest, _ x: HTTPExchange) {
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
        let (service, query, csv) = (self.service, q, r.query["format"] == "csv")
        Self.offMainLoop(x, { try service.cycles(query) }) { rows in
            if csv {
                let text = ([CycleRow.csvHeader] + rows.map(\.csv)).joined(separator: "\r\n") + "\r\n"
                x.respond(200, contentType: "text/csv; charset=utf-8", body: Array(text.utf8))
            } else {
                x.json(200, .object([("cycles", .array(rows.map(\.json)))]))
            }
        }
    }
}
