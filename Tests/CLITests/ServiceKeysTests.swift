import Foundation
import TestSupport
import Testing

/// A service instance honours every key a pipeline file may hold, or refuses at `POST`, with a 400 naming it, the
/// one it cannot honour; no key is parsed and dropped.
@Suite(.serialized, .suiteLimit) struct ServiceKeysTests {
    /// The broker connection, node and spool are the service's (one for every instance): `[publish]` keys are
    /// refused by name; a window on a service without a display, and outputs into a place it cannot write, too.
    @Test func keysItCannotHonourAreRefusedByName() throws {
        // No display in the service's environment, whatever the test runner has.
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = nil
        environment["WAYLAND_DISPLAY"] = nil
        let service = try Service(environment: environment)
        defer { #expect(service.terminate() == 0, "\(service.stderr.suffix(400))") }
        try #require(service.port > 0, "\(service.stderr)")
        // A file where a folder is wanted.
        let file = Tool.folder.appendingPathComponent("service-keys-file-\(UUID().uuidString.prefix(8))").path
        try "x".write(toFile: file, atomically: true, encoding: .utf8)
        let refused: [(String, String, String)] = [
            ("publish.url", "mqtt://127.0.0.1/site", "[publish] url: give --publish"),
            ("publish.node", "dock1", "[publish] node: give --node"),
            ("publish.spool", "/tmp/spool", "[publish] spool: give --spool"),
            ("publish.spool-max", "64MB", "[publish] spool-max: give --spool-max"),
            ("display.enabled", "true", "[display] enabled: this service has no display"),
            ("record.path", "\(file)/x.mp4", "[record] path: '\(file)' is not a folder this service can write"),
            ("record.path", "\(file)-none/x.mp4", "[record] path: no such folder '\(file)-none'"),
            ("snapshots.folder", file, "[snapshots] folder: '\(file)' is not a folder this service can write"),
        ]
        for (key, value, message) in refused {
            let r = try service.request(
                "POST", "/v1/pipelines/demo/instances", json: ["set": [key: value, "source.frames": "10"]])
            #expect(r.status == 400, "\(key)=\(value): \(r.status) \(r.text)")
            let error = r.object["error"] as? String ?? ""
            #expect(error.contains(message), "\(key)=\(value): \(error)")
        }
        // Nothing was started by a refused request.
        let listed = try service.request("GET", "/v1/instances")
        #expect((listed.json as? [Any])?.isEmpty == true, "\(listed.text)")
    }

    /// The keys it honours as `run` does, on one instance: the recording (it plays, every frame), the snapshots, the
    /// tracking and the viewfinder each show in what the instance writes. (The overlay's style is checked in the
    /// pixels it draws by `OverlayGoldenTests`.)
    @Test func keysItHonoursShowInWhatTheInstanceWrites() throws {
        let service = try Service()
        defer { #expect(service.terminate() == 0, "\(service.stderr.suffix(400))") }
        try #require(service.port > 0, "\(service.stderr)")
        let folder = Tool.folder.appendingPathComponent("service-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let made = try service.request(
            "POST", "/v1/pipelines/demo/instances",
            json: [
                "set": [
                    "source.frames": "45", "source.size": "640x360", "record.path": folder.path + "/rec.mp4",
                    "snapshots.folder": folder.path + "/snaps", "events.path": folder.path + "/events.jsonl",
                    "tracking.every-frame": "true", "viewfinder.enabled": "false",
                ]
            ])
        #expect(made.status == 201, "\(made.text)")
        let id = try #require(made.object["id"] as? String)
        try service.waitFor(id) { ($0["state"] as? String) == "completed" }
        let events = (try? String(contentsOfFile: folder.path + "/events.jsonl", encoding: .utf8)) ?? ""
        // every-frame: detections, not appeared/lost; viewfinder off: codes outside the 4:3 region (x 107 to 533 of
        // 640) read too.
        #expect(events.contains(#""event":"detection""#), "\(events.prefix(300))")
        #expect(!events.contains(#""event":"appeared""#))
        let outside = events.split(separator: "\n").contains { line in
            guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let polygon = o["polygon"] as? [[Double]]
            else { return false }
            return polygon.contains { $0[0] < 100 || $0[0] > 540 }
        }
        #expect(outside, "no code read outside the 4:3 region")
        #expect(events.contains(#""event":"eos""#))
        #expect(try Tool.framesIn(folder.path + "/rec.mp4") == 45, "the recording does not play its 45 frames")
        let snaps = (try? FileManager.default.contentsOfDirectory(atPath: folder.path + "/snaps")) ?? []
        #expect(snaps.contains { $0.hasSuffix(".png") }, "\(snaps)")
    }
}
