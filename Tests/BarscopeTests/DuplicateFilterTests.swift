import TestSupport
import Testing

@testable import Barscope

/// The duplicate filter on a made-up event sequence: one code that leaves and comes back as new tracks.
@Suite(.suiteLimit) struct DuplicateFilterTests {
    static let code = Detection(type: "QR-Code", data: "dock-7", quality: 1, polygon: [Point(0, 0)])

    /// Track 1 from 0 s to 1 s, track 2 from 3 s, track 3 from 3.5 s (the same code each time).
    static let events: [Event] = [
        .appeared(frame: 0, ptsNs: 0, detection: code, track: 1),
        .lost(frame: 30, ptsNs: 1_000_000_000, track: 1, type: code.type, data: code.data, framesSeen: 30),
        .appeared(frame: 90, ptsNs: 3_000_000_000, detection: code, track: 2),
        .lost(frame: 100, ptsNs: 3_300_000_000, track: 2, type: code.type, data: code.data, framesSeen: 10),
        .appeared(frame: 105, ptsNs: 3_500_000_000, detection: code, track: 3),
        .eos(frames: 120, codes: 3),
    ]

    func admitted(_ policy: DuplicatePolicy) -> [String] {
        var filter = DuplicateFilter(policy: policy)
        return Self.events.filter { filter.admit($0) }.map { e in
            switch e {
            case .appeared(_, _, _, let t): return "appeared \(t)"
            case .lost(_, _, let t, _, _, _): return "lost \(t)"
            default: return e.name
            }
        }
    }

    @Test func policies() throws {
        #expect(admitted(.everyTrack) == ["appeared 1", "lost 1", "appeared 2", "lost 2", "appeared 3", "eos"])
        #expect(admitted(.oncePerSession) == ["appeared 1", "lost 1", "eos"])
        // 2 s: track 2 (3 s after track 1's report) is reported, track 3 (0.5 s after track 2's) is not.
        #expect(admitted(.after(milliseconds: 2000)) == ["appeared 1", "lost 1", "appeared 2", "lost 2", "eos"])
        #expect(try DuplicatePolicy.parse("after:250") == .after(milliseconds: 250))
        #expect(try DuplicatePolicy.parse("once") == .oncePerSession)
        #expect(throws: BarscopeError.self) { try DuplicatePolicy.parse("twice") }
    }
}
