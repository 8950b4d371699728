import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `barscope serve` started as a user (or systemd) starts it, on a free loopback port, with a state folder of the
/// test's own; driven with a real HTTP client (URLSession).
final class Service: @unchecked Sendable {
    let process = Process()
    let state: String
    private(set) var port = 0
    let token: String?
    private let err = Pipe()
    private var drain: PipeDrain! = nil

    /// - Parameters:
    ///   - environment: the service's whole environment when given (systemd gives no HOME, no terminal).
    init(
        state: String? = nil, token: String? = nil, listen: String = "127.0.0.1:0", extra: [String] = [],
        environment: [String: String]? = nil
    ) throws {
        self.state =
            state ?? Tool.folder.appendingPathComponent("serve-state-\(UUID().uuidString)").path
        self.token = token
        var args = ["serve", "--listen", listen, "--state", self.state] + extra
        if let token {
            let file = Tool.folder.appendingPathComponent("token-\(UUID().uuidString)").path
            try (token + "\n").write(toFile: file, atomically: true, encoding: .utf8)
            args += ["--token-file", file]
        }
        process.executableURL = Tool.url
        process.arguments = args
        if let environment { process.environment = Sanitizer.keepingOptions(environment) }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        try process.run()
        // Standard error drained from the start (the service never blocks on it, no read blocks the test); the
        // port comes in its first line: "barscope: serving http://127.0.0.1:PORT/ (state in ...)".
        drain = PipeDrain(err.fileHandleForReading)
        drain.waitForLine(20)
        let text = drain.text
        if let r = text.range(of: #"http://127\.0\.0\.1:(\d+)/"#, options: .regularExpression) {
            port = Int(text[r].split(separator: ":").last!.dropLast()) ?? 0
        }
    }

    var stderr: String { drain.text }

    var base: String { "http://127.0.0.1:\(port)" }

    struct Reply {
        var status: Int
        var body: Data
        var headers: [String: String]
        var text: String { String(decoding: body, as: UTF8.self) }
        var json: Any? { try? JSONSerialization.jsonObject(with: body) }
        var object: [String: Any] { json as? [String: Any] ?? [:] }
    }

    /// One request; waits for the whole answer (at most `timeout` seconds).
    func request(
        _ method: String, _ path: String, json: Any? = nil, raw: Data? = nil, headers: [String: String] = [:],
        timeout: Double = 60, withToken: Bool = true
    ) throws -> Reply {
        var r = URLRequest(url: URL(string: base + path)!)
        r.httpMethod = method
        r.timeoutInterval = timeout
        // A Cookie header is the test's own (URLSession's cookie store would add or drop one).
        r.httpShouldHandleCookies = false
        if let json { r.httpBody = try JSONSerialization.data(withJSONObject: json) }
        if let raw { r.httpBody = raw }
        if let token, withToken { r.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        for (k, v) in headers { r.setValue(v, forHTTPHeaderField: k) }
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var reply: Reply? = nil
        nonisolated(unsafe) var failure: Error? = nil
        URLSession.shared.dataTask(with: r) { data, response, error in
            if let http = response as? HTTPURLResponse {
                var h: [String: String] = [:]
                for (k, v) in http.allHeaderFields { h["\(k)".lowercased()] = "\(v)" }
                reply = Reply(status: http.statusCode, body: data ?? Data(), headers: h)
            }
            failure = error
            done.signal()
        }.resume()
        _ = done.wait(timeout: .now() + timeout + 5)
        if let reply { return reply }
        throw failure ?? URLError(.timedOut)
    }

    /// Reads a streaming answer (SSE, MJPEG) for `seconds` with curl (URLSession on Linux hands a chunked stream
    /// over late), then lets go.
    func stream(_ path: String, seconds: Double, headers: [String: String] = [:]) throws -> Data {
        try streamed(path, seconds: seconds, headers: headers).body
    }

    /// A streamed answer read for `seconds`: its status, content type and the body read so far.
    func streamed(_ path: String, seconds: Double, headers: [String: String] = [:]) throws -> (
        status: Int, type: String, body: Data
    ) {
        let head = Tool.folder.appendingPathComponent("stream-head-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: head) }
        let body = try stream(path, seconds: seconds, headers: headers, head: head)
        let lines = ((try? String(contentsOfFile: head, encoding: .utf8)) ?? "").split(whereSeparator: \.isNewline)
        let status = lines.first.flatMap { $0.split(separator: " ").dropFirst().first.flatMap { Int($0) } } ?? 0
        let type =
            lines.first { $0.lowercased().hasPrefix("content-type:") }
            .map { $0.dropFirst("content-type:".count).trimmingCharacters(in: .whitespaces) } ?? ""
        return (status, type, body)
    }

    private func stream(_ path: String, seconds: Double, headers: [String: String], head: String?) throws -> Data {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        var args = ["-sN", "--max-time", String(seconds)] + (head.map { ["-D", $0] } ?? [])
        if let token { args += ["-H", "Authorization: Bearer \(token)"] }
        for (k, v) in headers { args += ["-H", "\(k): \(v)"] }
        p.arguments = args + [base + path]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return data
    }

    /// A wait on an instance's status that ended without what it waited for.
    struct WaitFailed: Error, CustomStringConvertible {
        var description: String
    }

    /// Waits until `condition` holds on the instance's status (polled every 100 ms) and returns that status.
    /// - Parameter what: what is awaited, for the message ("playing").
    /// - Throws: `WaitFailed` at the deadline, naming the calling line, the instance, what was awaited and the last
    ///   status seen: the calling test stops there, where going on past a failed wait would only fail further down
    ///   for a reason that is not the one (it used to record an issue and return, and callers went on).
    /// A conveyor instance of 600 frames at 640x360 with read cycles by motion, recorded to `folder`/dock.mp4, run
    /// to its end; its id and its `cycle` events (from `folder`/events.jsonl).
    func completedConveyor(in folder: String) throws -> (id: String, cycles: [[String: Any]]) {
        let made = try request(
            "POST", "/v1/pipelines/conveyor/instances",
            json: [
                "set": [
                    "source.live": false, "source.frames": 600, "source.size": "640x360", "cycles.mode": "motion",
                    "record.path": folder + "/dock.mp4", "events.path": folder + "/events.jsonl",
                ]
            ])
        guard let id = made.object["id"] as? String else {
            throw WaitFailed(description: "the conveyor instance was not made: \(made.status) \(made.text)")
        }
        try waitFor(id, "completed", timeout: 60) { $0["state"] as? String == "completed" }
        let events = try String(contentsOfFile: folder + "/events.jsonl", encoding: .utf8)
        return (id, SightingsTests.rows(events).filter { $0["event"] as? String == "cycle" })
    }

    @discardableResult
    func waitFor(
        _ id: String, _ what: String = "the awaited status", timeout: Double = 30,
        sourceLocation: SourceLocation = #_sourceLocation, _ condition: ([String: Any]) -> Bool
    ) throws -> [String: Any] {
        var last: [String: Any] = [:]
        if try pollUntil(
            timeout, every: 0.1,
            {
                last = try request("GET", "/v1/instances/\(id)").object
                return condition(last)
            })
        {
            return last
        }
        throw WaitFailed(
            description:
                "\(sourceLocation.fileName):\(sourceLocation.line): instance \(id): \(what) did not come in \(timeout) s;"
                + " last status: \(last)")
    }

    /// SIGTERM, and the exit status.
    func terminate(timeout: Double = 60) -> Int32? {
        guard process.isRunning else { return process.terminationStatus }
        kill(process.processIdentifier, SIGTERM)
        pollUntil(timeout) { !process.isRunning }
        return process.isRunning ? nil : process.terminationStatus
    }

    /// SIGTERM, and an issue unless it exits 0, with the service's standard error (a sanitizer's report, which
    /// sets the exit status, is there and nowhere else).
    func expectCleanExit(sourceLocation: SourceLocation = #_sourceLocation) {
        let status = terminate()
        // From a sanitizer's first report on, if there is one (its end alone names neither access).
        let text = stderr
        let from = text.range(of: "WARNING: ThreadSanitizer")?.lowerBound ?? text.range(of: "ERROR: ")?.lowerBound
        let shown = from.map { String(text[$0...].prefix(16000)) } ?? String(text.suffix(6000))
        #expect(
            status == 0, "exit \(status.map(String.init) ?? "none"); standard error: \(shown)",
            sourceLocation: sourceLocation)
    }

    func kill9() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { if process.isRunning { kill9() } }

    /// The names of the service's threads, from /proc (GStreamer names a pad's streaming thread "element:pad").
    var threadNames: [String] {
        let tasks = "/proc/\(process.processIdentifier)/task"
        let ids = (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []
        return ids.compactMap {
            (try? String(contentsOfFile: "\(tasks)/\($0)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }.sorted()
    }

    /// The service's resident memory (kB), threads and open descriptors, from /proc.
    var resources: (rssKB: Int, threads: Int, fds: Int) {
        let pid = process.processIdentifier
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Int {
            status.split(separator: "\n").first { $0.hasPrefix(name + ":") }
                .flatMap { Int($0.split(whereSeparator: { $0 == " " || $0 == "\t" })[1]) } ?? -1
        }
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
        return (field("VmRSS"), field("Threads"), fds)
    }
}

/// JPEG's size from its start-of-frame marker.
func jpegSize(_ d: Data) -> (width: Int, height: Int)? {
    let b = [UInt8](d)
    guard b.count > 4, b[0] == 0xFF, b[1] == 0xD8 else { return nil }
    var i = 2
    while i + 9 < b.count {
        guard b[i] == 0xFF else { return nil }
        let marker = b[i + 1]
        let length = Int(b[i + 2]) << 8 | Int(b[i + 3])
        if (0xC0...0xC3).contains(marker) {
            return (Int(b[i + 7]) << 8 | Int(b[i + 8]), Int(b[i + 5]) << 8 | Int(b[i + 6]))
        }
        i += 2 + length
    }
    return nil
}
