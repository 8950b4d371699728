import Foundation
import TestSupport
import Testing

/// The web console in a real browser: Debian's headless `chromium`, driven through `chromium-driver` by
/// `Tests/Console/drive_console.py` (python3-selenium; scripts/setup installs all three), against a real
/// `barscope serve` on a free loopback port. The script does what a person does and checks the page and the service;
/// its screenshots are in the test's output folder (`console-SCENARIO/`).
@Suite(.serialized, .suiteLimit) struct ConsoleTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Console/drive_console.py").path
    static let browser =
        FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver")
        && FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/selenium")

    /// Runs one scenario; returns its measurements (the script's JSON line).
    func drive(
        _ scenario: String, _ service: Service, token: String? = nil, code: String? = nil, result: String? = nil,
        minimumLoad: Double = ConsoleTests.minimumLoad
    ) throws -> [String:
        Any]
    {
        let out = Tool.folder.appendingPathComponent("console-\(scenario)").path
        // A browser that hangs fails the test (killed at 240 s) instead of holding the suite.
        let r = try Tool.shellResult(
            [
                "/usr/bin/python3", Self.script, "--base", service.base, "--out", out, "--min-rate",
                String(minimumLoad),
                scenario,
            ]
                + (token.map { ["--token", $0] } ?? []) + (code.map { ["--code", $0] } ?? [])
                + (result.map { ["--result", $0] } ?? []),
            timeout: 240)
        let outText = r.stdout
        try #require(r.status == 0, "\(r.stderr)\nservice:\n\(service.stderr)\nscreenshots in \(out)")
        let last = outText.split(separator: "\n").last.map(String.init) ?? ""
        return try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any], "\(outText)")
    }

    /// The search page: a code typed, its sighting listed, its recording played in the page from two seconds before
    /// the first sight (the service answers byte ranges; the video's currentTime and readyState say it plays there).
    @Test(.enabled(if: browser, "needs chromium, chromium-driver and python3-selenium (scripts/setup)"))
    func theConsoleFindsACodeAndPlaysItsMoment() throws {
        let folder = Tool.folder.appendingPathComponent("console-search-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // Two codes, the second coming into view at frame 120 (4 s): its moment starts at 2 s.
        let clip = folder.appendingPathComponent("dock.mp4").path
        let truth = folder.appendingPathComponent("truth.jsonl").path
        let made = try Tool.run([
            "generate", clip, "--scene", "mix", "--codes", "2", "--appear-every", "120", "--frames", "210", "--size",
            "1280x720", "--speed", "1", "--seed", "9", "--only-1d", "--truth", truth,
        ])
        try #require(made.status == 0, "\(made.stderr)")
        let lines = try String(contentsOfFile: truth, encoding: .utf8).split(separator: "\n")
        let at120 = try #require(
            try JSONSerialization.jsonObject(with: Data(lines[120].utf8)) as? [String: Any])
        let before = Set(
            ((try JSONSerialization.jsonObject(with: Data(lines[100].utf8)) as? [String: Any])?["codes"]
                as? [[String: Any]]
                ?? []).compactMap { $0["data"] as? String })
        let late = try #require(
            (at120["codes"] as? [[String: Any]] ?? []).compactMap { $0["data"] as? String }.first {
                !before.contains($0)
            })
        let service = try Service()
        defer { service.expectCleanExit() }
        let created = try service.request(
            "POST", "/v1/pipelines/file-annotate/instances",
            json: [
                "set": [
                    "source.input": clip, "record.path": folder.path + "/dock-annotated.mp4",
                    "events.path": folder.path + "/events.jsonl",
                ]
            ])
        let id = try #require(created.object["id"] as? String, "\(created.text)")
        try service.waitFor(id) { ($0["state"] as? String) == "completed" }
        let r = try drive("search", service, code: late)
        let start = try #require(r["start"] as? Double)
        #expect(abs(start - 2) <= 0.1, "the moment starts at \(start) s")
        #expect((r["current_time"] as? Double ?? 0) >= start && (r["ready_state"] as? Int ?? 0) >= 2, "\(r)")
    }

    /// The read cycles' list: the noread cycles of a recorded conveyor chosen and listed, nothing else shown, and the
    /// newest one's recording played from two seconds before it opened.
    @Test(.enabled(if: browser, "needs chromium, chromium-driver and python3-selenium (scripts/setup)"))
    func theConsoleListsReadCyclesAndPlaysOne() throws {
        let folder = Tool.folder.appendingPathComponent("console-cycles-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let service = try Service()
        defer { service.expectCleanExit() }
        let noreads = try service.completedConveyor(in: folder).cycles.filter { $0["result"] as? String == "noread" }
        let newest = try #require(noreads.max { ($0["cycle"] as? Int ?? 0) < ($1["cycle"] as? Int ?? 0) })
        // Every cycle in the index before the page asks (the writer's last batch follows the instance's end).
        try #require(
            waitUntil(10, "the noread cycles in the index") {
                let r = try service.request("GET", "/v1/cycles?result=noread").object["cycles"] as? [[String: Any]]
                return r?.count == noreads.count
            })
        let r = try drive("cycles", service, result: "noread")
        #expect(r["rows"] as? Int == noreads.count, "\(r)")
        #expect(r["cycle"] as? Int == newest["cycle"] as? Int, "\(r), the newest noread: \(newest)")
        let opened = Double(newest["start_pts_ns"] as? Int ?? 0) / 1e9
        let start = try #require(r["start"] as? Double)
        #expect(abs(start - max(0, opened - 2)) <= 0.05, "played from \(start) s; the cycle opened at \(opened) s")
        #expect((r["current_time"] as? Double ?? 0) >= start && (r["ready_state"] as? Int ?? 0) >= 2, "\(r)")
    }

    /// From the form: bad input beside its field; the demo with a moving image, events and a snapshot; the
    /// viewfinder dragged and resized, and the next events inside the new region; copy; the type filter; Stop.
    @Test(.enabled(if: browser, "needs chromium, chromium-driver and python3-selenium (scripts/setup)"))
    func theConsoleDrivesAnInstance() throws {
        let service = try Service()
        defer { service.expectCleanExit() }
        let r = try drive("basic", service)
        #expect(r["detections_in_region"] as? Int ?? 0 >= 10)
        #expect(r["final_frames"] as? Int ?? 0 > 0)
        #expect((r["table_rows"] as? Int).map { (1...200).contains($0) } == true)
        #expect((r["copied"] as? String)?.isEmpty == false)
        let out = Tool.folder.appendingPathComponent("console-basic")
        let first = try Data(contentsOf: out.appendingPathComponent("console-live-1.png"))
        let second = try Data(contentsOf: out.appendingPathComponent("console-live-2.png"))
        #expect(first != second, "the live view did not move")
    }

    /// The events a second the load must reach: 50, as the issue asks.
    static let minimumLoad = 50.0
    /// The same under a sanitizer, which runs the service several times slower (seen: 22.9 under ThreadSanitizer)
    /// and is there for its reports: a tenth, said in a warning.
    static let minimumLoadUnderSanitizer = 5.0

    /// Eight live instances, every frame's codes: the page gets every event the service made, shows the newest 200, and
    /// stays responsive.
    @Test(.enabled(if: browser, "needs chromium, chromium-driver and python3-selenium (scripts/setup)"))
    func eightInstancesKeepThePageResponsive() throws {
        let service = try Service()
        defer { service.expectCleanExit() }
        // The load is what the issue asks (the service made at least 50 events/s), and the page took every one of
        // them (numbered without gaps, caught up within 10 s of the window's end), whatever rate a loaded machine
        // managed to make. The script is held to the same bound.
        let load = Sanitizer.bound(
            Self.minimumLoad, sanitized: Self.minimumLoadUnderSanitizer, "events/s the eight instances must make")
        let r = try drive("load", service, minimumLoad: load)
        print("console with 8 instances: \(r)")
        #expect(r["events_offered_per_s"] as? Double ?? 0 >= load, "\(r)")
        #expect(r["events_missed"] as? Int == 0)
        #expect(r["table_rows"] as? Int ?? 999 <= 200)
        #expect((r["live_frames_in_15s"] as? [Int] ?? []).count == 8)
    }

    /// With a token the page asks for it, refuses a wrong one and works with the right one.
    @Test(.enabled(if: browser, "needs chromium, chromium-driver and python3-selenium (scripts/setup)"))
    func thePageAsksForTheToken() throws {
        let token = "console-test-token-\(UUID().uuidString)"
        let service = try Service(token: token)
        defer { service.expectCleanExit() }
        let r = try drive("token", service, token: token)
        #expect(r["token"] as? String == "accepted")
    }
}

/// The console's protections without a browser: a request from a page of another origin is refused; the page's own
/// files need no token, everything else does, and the token cookie counts for GET only.
@Suite(.suiteLimit) struct ConsoleGuardTests {
    @Test func anotherOriginAndTheCookie() throws {
        let token = "guard-test-token-\(UUID().uuidString)"
        let service = try Service(token: token)
        defer { service.expectCleanExit() }
        let foreign = try service.request(
            "POST", "/v1/pipelines/demo/instances", json: [:], headers: ["Origin": "http://evil.example"])
        #expect(foreign.status == 403)
        #expect(try service.request("GET", "/", withToken: false).status == 200)
        #expect(try service.request("GET", "/console.js", withToken: false).status == 200)
        #expect(try service.request("GET", "/v1/instances", withToken: false).status == 401)
        let cookie = ["Cookie": "barscope_token_\(service.port)=\(token)"]
        #expect(try service.request("GET", "/v1/instances", headers: cookie, withToken: false).status == 200)
        #expect(
            try service.request("POST", "/v1/pipelines/nope/instances", json: [:], headers: cookie, withToken: false)
                .status == 401)
        // Another port's cookie is not this service's.
        let other = ["Cookie": "barscope_token_1=\(token)"]
        #expect(try service.request("GET", "/v1/instances", headers: other, withToken: false).status == 401)
    }
}
