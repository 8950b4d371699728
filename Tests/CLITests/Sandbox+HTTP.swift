import Barscope
import Foundation
import TestSupport
import Testing

/// `curl` lines and the routes of `serve --help`, on a service of the test's own; the answers fit their comments.
extension Sandbox {
    func curl(_ given: [String], _ command: DocumentedExamplesTests.Command, _ source: String) throws {
        let at = "\(command.text)  [\(source)]"
        guard let service else {
            Issue.record("\(at): no `barscope serve` started before it in its example")
            return
        }
        var words = given.map { word -> String in
            var w = word.replacingOccurrences(of: "localhost:8080", with: "127.0.0.1:\(service.port)")
                .replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(service.port)")
            for (example, real) in ids { w = w.replacingOccurrences(of: example, with: real) }
            return w
        }
        let streams = words.contains { $0.hasPrefix("-") && !$0.hasPrefix("--") && $0.contains("N") }
        if streams { words += ["--max-time", "3"] }
        words += ["--write-out", "\n%{http_code}"]
        let result = try Tool.shellResult(["curl"] + words, folder: folder)
        var body = result.stdout
        let status = Int(body.split(separator: "\n").last ?? "") ?? 0
        if let cut = body.lastIndex(of: "\n") { body = String(body[..<cut]) }
        #expect((200..<300).contains(status), "\(at): HTTP \(status): \(body.prefix(300))")
        #expect(result.status == 0 || (streams && result.status == 28), "\(at): curl exit \(result.status)")
        try answerFits(body, comment: command.comment, words: words, at: at)
        // The instance it made stands for the example's ID in the lines that follow.
        if let id = (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["id"] as? String,
            let example = command.comment.firstMatch(of: /"id":\s*"([^"]+)"/)
        {
            ids[String(example.1)] = id
        }
        // A control command's effect: its event follows.
        if let control = words.firstIndex(of: "-d").map({ words[$0 + 1] }), control.contains("\"command\""),
            let id = words.last(where: { $0.contains("/v1/instances/") })?.firstMatch(of: /instances\/([^\/]+)\//)
        {
            let name = control.firstMatch(of: /"command":\s*"(\w+)/).map { String($0.1) } ?? ""
            // A viewfinder's new ratio: the event of the region it settles at.
            let ratio = control.firstMatch(of: /(\d+):(\d+)/).map { Double($0.1)! / Double($0.2)! }
            let ratioOf = { (e: [String: Any]) -> Double? in
                guard let r = e["region"] as? [String: Any], let w = r["width"] as? Double,
                    let h = r["height"] as? Double, h > 0
                else { return nil }
                return w / h
            }
            let event = try waitForEvent(name, instance: String(id.1), service: service) { e in
                guard name == "viewfinder", let ratio else { return true }
                return ratioOf(e).map { abs($0 - ratio) < 0.02 } ?? false
            }
            #expect(event != nil, "\(at): no \(name) event followed")
            if name == "viewfinder", let ratio, let event {
                #expect(ratioOf(event).map { abs($0 - ratio) < 0.02 } == true, "\(at): the new viewfinder is \(event)")
            }
        }
        ran.append(source)
    }

    /// The instance's event named `name` that `fits`, from its event stream (10 s at most); the last one named
    /// `name` when none fits.
    func waitForEvent(
        _ name: String, instance: String, service: Service, fits: ([String: Any]) -> Bool = { _ in true }
    ) throws -> [String: Any]? {
        let deadline = Date(timeIntervalSinceNow: 10)
        var last: [String: Any]? = nil
        while Date() < deadline {
            let r = try Tool.shellResult(
                ["curl", "-sN", "--max-time", "1", "\(service.base)/v1/instances/\(instance)/events?since=0"],
                folder: folder)
            for l in r.stdout.split(separator: "\n") where l.hasPrefix("data: ") {
                let object = try? JSONSerialization.jsonObject(with: Data(l.dropFirst(6).utf8)) as? [String: Any]
                guard let object, object["event"] as? String == name else { continue }
                if fits(object) { return object }
                last = object
            }
        }
        return last
    }

    /// The answer has what the example's comment says it has: the fields it lists, the keys of the JSON it shows,
    /// an event stream, Prometheus text, the image it saved.
    func answerFits(_ body: String, comment: String, words: [String], at: String) throws {
        if let i = words.firstIndex(of: "-o") {
            let path = folder.appendingPathComponent(words[i + 1]).path
            checkFile(path, size: (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0, at: at)
            return
        }
        let json = try? JSONSerialization.jsonObject(with: Data(body.utf8))
        let object = (json as? [String: Any]) ?? ((json as? [[String: Any]])?.first)
        var keys: [String] = []
        if comment.hasPrefix("{") || comment.hasPrefix("[") {
            keys = comment.matches(of: /"(\w+)":/).map { String($0.1) }
        } else if let list = comment.firstMatch(of: /^([a-z_]+(?:, [a-z_]+)+)$/) {
            keys = list.1.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        for key in keys { #expect(object?[key] != nil, "\(at): the answer has no \(key): \(body.prefix(300))") }
        if comment.contains("Server-Sent Events") {
            #expect(body.contains("data: {"), "\(at): \(body.prefix(300))")
        }
        if comment.contains("Prometheus") { #expect(body.contains("# TYPE"), "\(at): \(body.prefix(300))") }
        if comment.contains("final status") { #expect(object?["state"] != nil, "\(at): \(body.prefix(300))") }
    }

    /// A route of `serve --help`, on an instance of the live demo made for them; routes that stop it run last.
    func route(_ method: String, _ path: String, _ body: String?, from source: String) throws {
        if service == nil {
            let started = try Service()
            try #require(started.port > 0, "\(started.stderr)")
            service = started
        }
        let service = service!
        if routeInstance == nil {
            let made = try service.request(
                "POST", "/v1/pipelines/demo/instances",
                json: ["set": ["source.live": "true", "source.frames": "0", "cycles.mode": "commands"]])
            routeInstance = made.object["id"] as? String
            try #require(routeInstance != nil, "\(made.text)")
        }
        let id = routeInstance!
        // The help's `[/ID]` is two routes; placeholders take this run's values.
        var paths = [path]
        if path.contains("[/ID]") {
            paths = [
                path.replacingOccurrences(of: "[/ID]", with: ""), path.replacingOccurrences(of: "[/ID]", with: "/ID"),
            ]
        }
        for p in paths {
            if p.contains("FILE") {
                skip("\(method) \(p)", source, "names a snapshot a run saved (ServeTests fetch one)")
                continue
            }
            let real = p.replacingOccurrences(of: "NAME", with: "demo").replacingOccurrences(of: "ID", with: id)
                .replacingOccurrences(of: "=N", with: "=2")
            if method == "DELETE" || (method == "POST" && p.contains("/instances") && !p.contains("ID")) {
                deferredRoutes.append((method, real, body, source))
                continue
            }
            try call(method, real, body, source)
        }
    }

    /// The routes that make or stop instances, after the others.
    func deleteRoutes() throws {
        for (method, path, body, source) in deferredRoutes.sorted(by: { $0.0 == "POST" && $1.0 != "POST" }) {
            var b = body
            // The help's example body names a clip: this test's.
            if let given = b, given.contains("clip.mp4") { b = given.replacingOccurrences(of: "clip.mp4", with: clip) }
            try call(method, path, b, source)
        }
    }

    private func call(_ method: String, _ path: String, _ body: String?, _ source: String) throws {
        let service = service!
        let at = "\(method) \(path)  [\(source)]"
        let streams = path.hasSuffix("/events") || path.contains(".mjpg") || path.hasPrefix("/v1/events")
        var args = ["curl", "-s", "-X", method, "--write-out", "\n%{http_code}", "\(service.base)\(path)"]
        if streams { args += ["-N", "--max-time", "2"] }
        if let body { args += ["-d", body] }
        let r = try Tool.shellResult(args, folder: folder)
        let status = Int(r.stdout.split(separator: "\n").last ?? "") ?? 0
        #expect((200..<300).contains(status), "\(at): HTTP \(status): \(r.stdout.prefix(300))")
        if path.hasSuffix(".jpg") {
            #expect(r.output.prefix(3) == Data([0xFF, 0xD8, 0xFF]), "\(at): not a JPEG")
        }
        if path.hasSuffix("/events") { #expect(r.stdout.contains("data: {"), "\(at): \(r.stdout.prefix(200))") }
        ran.append(source)
    }
}
