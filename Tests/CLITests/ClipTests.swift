import Foundation
import TestSupport
import Testing

/// `GET /v1/clips`: a sighting's moment as an MP4 cut at keyframes without re-encoding; it plays (decoded here), is
/// as long as asked, and the frame at the sight it names shows the code (scanned).
@Suite(.serialized, .suiteLimit) struct ClipTests {
    @Test func aSightingsMomentIsAPlayableClipThatShowsTheCode() throws {
        let state = try SightingsTests.folder("clips").path
        let recording = state + "/dock.mp4"
        let index = state + "/sightings.sqlite"
        // 30 s of the conveyor: a parcel's codes every few seconds.
        let made = try Tool.run([
            "run", "demo", "--scene", "conveyor", "--frames", "900", "--size", "640x360", "--record", recording,
            "--index", index, "--camera", "dock1", "--quiet",
        ])
        try #require(made.status == 0, "\(made.stderr)")
        let rows = SightingsTests.rows(try Tool.run(["search", "--index", index, "--json"]).stdout)
        // One seen in the middle, so that both sides of the moment are in the recording.
        let row = try #require(
            rows.first { ($0["offset_s"] as? Double).map { $0 >= 12 && $0 <= 18 } ?? false }, "\(rows)")
        let run = try #require(row["run"] as? String)
        let track = try #require(row["track"] as? Int)
        let code = try #require(row["code"] as? String)

        let service = try Service(state: state)
        defer { #expect(service.terminate() == 0, "\(service.stderr.suffix(400))") }
        let clip = try service.request("GET", "/v1/clips?run=\(run)&track=\(track)")
        try #require(clip.status == 200, "\(clip.text.prefix(300))")
        #expect(clip.headers["content-type"] == "video/mp4")
        let sight = try #require(clip.headers["x-barscope-sight"].flatMap { Double($0) }, "\(clip.headers)")
        #expect(abs(sight - 10) < 0.05, "the sight at \(sight) s in the clip")
        let file = state + "/clip.mp4"
        try clip.body.write(to: URL(fileURLWithPath: file))

        // It plays: decoded to its frames, 20 s of them at 30 frames/s (within a frame), the code at the sight.
        let count = try Self.expectCodeAtSight(file, sight: sight, code: code, frames: state + "/frames")
        #expect(abs(count - 600) <= 1, "\(count) frames")
        // Not re-encoded: the clip's H.264 stream is a piece of the recording's, byte for byte.
        func stream(_ mp4: String) throws -> Data {
            let out = mp4 + ".h264"
            let r = try Tool.shellResult([
                "gst-launch-1.0", "-q", "filesrc", "location=\(mp4)", "!", "qtdemux", "!", "h264parse", "!",
                "video/x-h264,stream-format=byte-stream", "!", "filesink", "location=\(out)",
            ])
            #expect(r.status == 0, "\(r.stderr)")
            return try Data(contentsOf: URL(fileURLWithPath: out))
        }
        let (whole, piece) = (try stream(recording), try stream(file))
        try #require(piece.count > 10_000, "\(piece.count) bytes")
        let middle = piece.subdata(in: (piece.count / 2)..<(piece.count / 2 + 4096))
        #expect(whole.range(of: middle) != nil, "the clip's frames are not the recording's")

        // Asked for less: 2 s before, 3 s after.
        let short = try service.request("GET", "/v1/clips?run=\(run)&track=\(track)&before=2&after=3")
        #expect(short.status == 200 && short.headers["x-barscope-sight"] == "2.000", "\(short.headers)")
        let shortFile = state + "/short.mp4"
        try short.body.write(to: URL(fileURLWithPath: shortFile))
        let length = try Tool.shellResult(["gst-discoverer-1.0", shortFile]).stdout
        #expect(length.contains("Duration: 0:00:05.0"), "\(length)")

        for (query, status) in [
            ("run=\(run)&track=999", 404), ("run=\(run)", 400), ("run=\(run)&track=\(track)&before=-1", 400),
            ("run=\(run)&track=\(track)&after=9999", 400),
        ] {
            let r = try service.request("GET", "/v1/clips?\(query)")
            #expect(r.status == status && (r.object["error"] as? String) != nil, "\(query): \(r.status) \(r.text)")
        }
    }

    /// A moment that reaches back past its segment's start (`--segment 10`): cut from the segments it spans, joined,
    /// as long as asked, the sight where it says, the code on the frame there.
    @Test func aMomentAcrossSegmentsIsCutFromThemJoined() throws {
        let state = try SightingsTests.folder("clips-segments").path
        let index = state + "/sightings.sqlite"
        let made = try Tool.run([
            "run", "demo", "--scene", "conveyor", "--frames", "900", "--size", "640x360", "--record",
            state + "/dock.mp4", "--segment", "10", "--index", index, "--camera", "dock1", "--quiet",
        ])
        try #require(made.status == 0, "\(made.stderr)")
        let rows = SightingsTests.rows(try Tool.run(["search", "--index", index, "--json"]).stdout)
        // Seen early in a segment after the first: ten seconds before it are in the segment before.
        let row = try #require(
            rows.filter {
                ($0["recording"] as? String)?.hasSuffix("-00000.mp4") == false && ($0["offset_s"] as? Double ?? 99) < 8
            }.min { ($0["offset_s"] as? Double ?? 0) < ($1["offset_s"] as? Double ?? 0) }, "\(rows)")
        let run = try #require(row["run"] as? String)
        let track = try #require(row["track"] as? Int)
        let code = try #require(row["code"] as? String)

        let service = try Service(state: state)
        defer { #expect(service.terminate() == 0, "\(service.stderr.suffix(400))") }
        let clip = try service.request("GET", "/v1/clips?run=\(run)&track=\(track)&before=10&after=5")
        try #require(clip.status == 200, "\(clip.text.prefix(300))")
        let sight = try #require(clip.headers["x-barscope-sight"].flatMap { Double($0) }, "\(clip.headers)")
        #expect(
            abs(sight - 10) < 0.05, "the sight at \(sight) s in the clip (\(row["offset_s"] ?? "") s in its segment)")
        let file = state + "/clip.mp4"
        try clip.body.write(to: URL(fileURLWithPath: file))
        let count = try Self.expectCodeAtSight(file, sight: sight, code: code, frames: state + "/frames")
        #expect(abs(count - 450) <= 1, "\(count) frames, not 15 s")
    }

    /// Decodes a clip to PNG frames in `frames` and expects `code` scanned on the frame at `sight` seconds (or the
    /// next few: a code is first read as it comes into view); the number of frames decoded.
    static func expectCodeAtSight(_ file: String, sight: Double, code: String, frames: String) throws -> Int {
        try FileManager.default.createDirectory(atPath: frames, withIntermediateDirectories: true)
        let decoded = try Tool.shellResult([
            "gst-launch-1.0", "-q", "filesrc", "location=\(file)", "!", "decodebin", "!", "videoconvert", "!", "pngenc",
            "!", "multifilesink", "location=\(frames)/f-%05d.png",
        ])
        #expect(decoded.status == 0, "\(decoded.stderr)")
        let n = Int((sight * 30).rounded())
        let pngs = (n...(n + 3)).map { String(format: "\(frames)/f-%05d.png", $0) }
            .filter { FileManager.default.fileExists(atPath: $0) }
        let scanned = try Tool.run(["scan"] + pngs)
        #expect(scanned.stdout.contains(":\(code)\n"), "\(code) at \(sight) s: \(scanned.stdout)")
        return try FileManager.default.contentsOfDirectory(atPath: frames).count
    }
}
