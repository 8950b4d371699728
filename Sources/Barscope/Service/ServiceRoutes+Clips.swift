import Foundation

/// `GET /v1/clips?run=R&track=T[&before=S][&after=S]`: the moment of a sighting as an MP4 of its own, cut from the
/// recording the index names at keyframes without re-encoding, from `before` seconds before its first sight to
/// `after` seconds after it (10 and 10 by default, 0 to 120 each). The clip's data starts at the keyframe at or
/// before that (its frames before the moment are decoded, not shown); `X-Barscope-Sight` says where in the clip the
/// first sight is (seconds). A moment that reaches past its segment's start or end (`--segment`) is cut from the
/// segments it spans, joined.
extension ServiceRoutes {
    func clip(_ r: HTTPRequest, _ x: HTTPExchange) {
        guard let run = r.query["run"], !run.isEmpty, let track = r.query["track"].flatMap({ Int($0) }) else {
            x.error(400, "run and track: the sighting whose moment is wanted")
            return
        }
        var span: [String: Double] = ["before": 10, "after": 10]
        for name in ["before", "after"] {
            guard let text = r.query[name] else { continue }
            guard let s = Double(text), s >= 0, s <= 120 else {
                x.error(400, "\(name) '\(text)': expected seconds between 0 and 120")
                return
            }
            span[name] = s
        }
        let (before, after) = (span["before"]!, span["after"]!)
        let service = self.service
        Self.offMainLoop(x, { Self.clipAnswer(service: service, run: run, track: track, before: before, after: after) })
        {
            $0.send(x)
        }
    }

    static func clipAnswer(service: ScanService, run: String, track: Int, before: Double, after: Double)
        -> RecordingAnswer
    {
        let row: Sighting?
        do { row = try service.sightings(SightingQuery(limit: 1, run: run, track: track)).sightings.first } catch {
            return .failure(503, "the sightings index: \(error)")
        }
        guard let row, let path = row.recording, FileManager.default.fileExists(atPath: path) else {
            return .failure(404, "no recording of sighting \(run)/\(track) on this machine")
        }
        let sight = row.offsetSeconds ?? 0
        let output = NSTemporaryDirectory() + "barscope-clip-\(UUID().uuidString).mp4"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let (files, shift) = ClipCutter.segments(around: path, from: sight - before, to: sight + after)
        do {
            let start = try ClipCutter.cut(
                files, from: sight + shift - before, to: sight + shift + after, into: output)
            let body = [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
            let name = "\(row.camera)-\(row.code.filter { $0.isLetter || $0.isNumber })-\(track).mp4"
            return .bytes(
                200, "video/mp4", body,
                [
                    ("Content-Disposition", "attachment; filename=\"\(name.filter { $0 != "\"" })\""),
                    ("X-Barscope-Sight", String(format: "%.3f", max(0, sight + shift - start))),
                ])
        } catch {
            // A live recording is written a fragment a second: a moment just seen may not be in the file yet.
            if !Retention.beingWritten().isDisjoint(with: files) {
                return .failure(503, "\(path): the moment is not in the recording yet (still being written)")
            }
            return .failure(500, "\(path): cannot cut the moment (\(error))")
        }
    }
}
