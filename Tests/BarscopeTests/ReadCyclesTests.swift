import TestSupport
import Testing

@testable import Barscope

/// Read cycles over frames in stream order: windows exact in stream time, verdicts, the ways a cycle closes, and the
/// desk that stamps commands on frames and refuses the ones out of order.
@Suite(.suiteLimit) struct ReadCyclesTests {
    static let frameNs: UInt64 = 33_333_333
    static func pts(_ n: Int) -> UInt64 { UInt64(n) * frameNs + 66_666_666 }
    static func code(_ data: String, type: String = "EAN-13", inside: Bool = true) -> Detection {
        Detection(
            type: type, data: data, quality: 10, polygon: [Point(0, 0), Point(10, 0), Point(10, 10), Point(0, 10)],
            inViewfinder: inside)
    }

    /// Runs frames 0..<count; `seen(n)` gives frame n's detections, `commands(n)` its stamped commands.
    static func run(
        _ settings: CycleSettings, frames count: Int, seen: (Int) -> [Detection],
        commands: (Int) -> [CycleCommand] = { _ in [] }
    ) -> [CycleResult] {
        var cycles = ReadCycles(settings)
        var out: [CycleResult] = []
        for n in 0..<count {
            out += cycles.frame(n, ptsNs: pts(n), detections: seen(n), commands: commands(n))
        }
        return out + cycles.finish()
    }

    @Test func commandsGiveExactWindows() throws {
        let r = Self.run(
            CycleSettings(), frames: 100, seen: { (5...50).contains($0) ? [Self.code("4006381333931")] : [] },
            commands: { $0 == 10 ? [.start(label: "parcel 1")] : $0 == 40 ? [.end] : [] })
        try #require(r.count == 1)
        let c = r[0]
        #expect(c.label == "parcel 1")
        #expect(c.outcome == .good)
        #expect(c.closedBy == .command)
        #expect(c.startPtsNs == Self.pts(10) && c.endPtsNs == Self.pts(40))
        #expect(c.codes.map(\.framesSeen) == [30])
        #expect(c.codes.first?.firstPtsNs == Self.pts(10) && c.codes.first?.lastPtsNs == Self.pts(39))
    }

    @Test func verdicts() {
        var s = CycleSettings()
        s.expect = .pattern("^[0-9]{13}$")
        s.expectCount = 1
        func verdict(_ codes: [Detection]) -> CycleResult {
            Self.run(
                s, frames: 20, seen: { (5...8).contains($0) ? codes : [] },
                commands: { $0 == 1 ? [.start(label: nil)] : $0 == 15 ? [.end] : [] })[0]
        }
        #expect(verdict([]).outcome == .noread)
        #expect(verdict([]).evidenceFrame == 15)
        #expect(verdict([Self.code("4006381333931")]).outcome == .good)
        #expect(verdict([Self.code("4006381333931")]).evidenceFrame == 5)
        #expect(verdict([Self.code("BARSCOPE-128", type: "CODE-128")]).outcome == .mismatch)
        #expect(verdict([Self.code("4006381333931"), Self.code("9780201379624")]).outcome == .multiple)
        // A wrong code beside the right one: good, the wrong one listed as not expected.
        let mixed = verdict([Self.code("4006381333931"), Self.code("BARSCOPE-128", type: "CODE-128")])
        #expect(mixed.outcome == .good)
        #expect(mixed.codes.map(\.expected) == [true, false])
        // Fewer right codes than expected: a no-read, with what was read.
        s.expectCount = 2
        #expect(verdict([Self.code("4006381333931")]).outcome == .noread)
        // A code outside the viewfinder is not the parcel's.
        s.expectCount = nil
        #expect(verdict([Self.code("4006381333931", inside: false)]).outcome == .noread)
    }

    @Test func timeoutClosesAtItsStreamTime() throws {
        var s = CycleSettings()
        s.timeoutNs = 500_000_000
        let r = Self.run(s, frames: 60, seen: { _ in [] }, commands: { $0 == 3 ? [.start(label: "late")] : [] })
        try #require(r.count == 1)
        #expect(r[0].closedBy == .timeout)
        #expect(r[0].outcome == .noread)
        #expect(r[0].endPtsNs == Self.pts(3) + 500_000_000)
    }

    @Test func autoOpensOnACodeAndClosesAfterTheGap() throws {
        var s = CycleSettings()
        s.auto = true
        s.gapNs = 200_000_000
        let r = Self.run(
            s, frames: 100,
            seen: { n in
                if (10...20).contains(n) { return [Self.code("4006381333931")] }
                if (40...50).contains(n) { return [Self.code("9780201379624")] }
                if (70...75).contains(n) { return [Self.code("5901234123457", inside: false)] }
                return []
            })
        try #require(r.count == 2)
        #expect(r.map(\.closedBy) == [.gap, .gap])
        #expect(r.map(\.startPtsNs) == [Self.pts(10), Self.pts(40)])
        #expect(r.map { $0.codes.map(\.data) } == [["4006381333931"], ["9780201379624"]])
        // Closed on the first frame at least the gap after the last code: frame 20 + 7 (6 frames are 199.99 ms).
        #expect(r[0].endPtsNs == Self.pts(27))
    }

    /// Motion mode: movement opens a cycle and keeps it open; a parcel with no code is a no-read.
    @Test func motionOpensCyclesWithoutACode() throws {
        var s = CycleSettings()
        s.auto = true
        s.motion = true
        s.gapNs = 200_000_000
        var cycles = ReadCycles(s)
        var out: [CycleResult] = []
        for n in 0..<100 {
            let moving = (10...30).contains(n) || (50...70).contains(n)
            let seen = (55...60).contains(n) ? [Self.code("4006381333931")] : []
            out += cycles.frame(n, ptsNs: Self.pts(n), detections: seen, moved: moving)
        }
        try #require(out.count == 2)
        #expect(out.map(\.outcome) == [.noread, .good])
        #expect(out.map(\.startPtsNs) == [Self.pts(10), Self.pts(50)])
        #expect(out[0].endPtsNs == Self.pts(37))
    }

    /// Block means see a box's edge and are blind to a fine pattern that shifts (rollers).
    @Test func viewActivityIgnoresFinePatterns() {
        let w = 320
        let h = 240
        func frame(_ draw: (Int, Int) -> UInt8) -> [UInt8] {
            var pixels = [UInt8](repeating: 0, count: w * h)
            for y in 0..<h { for x in 0..<w { pixels[y * w + x] = draw(x, y) } }
            return pixels.withUnsafeBytes {
                ViewActivity.signature(LumaImage(base: $0.baseAddress!, width: w, height: h, stride: w))
            }
        }
        let rollers = { (shift: Int) in frame { x, _ in (x + shift) % 8 < 2 ? 90 : 40 } }
        #expect(!ViewActivity.moved(from: rollers(0), to: rollers(3)))
        let box = frame { x, y in x > 100 && x < 200 && y > 60 && y < 180 ? 170 : ((x % 8) < 2 ? 90 : 40) }
        #expect(ViewActivity.moved(from: rollers(0), to: box))
        #expect(!ViewActivity.moved(from: nil, to: box))
    }

    @Test func endOfStreamClosesTheOpenCycle() {
        let r = Self.run(
            CycleSettings(), frames: 10, seen: { _ in [] }, commands: { $0 == 2 ? [.start(label: nil)] : [] })
        #expect(r.map(\.closedBy) == [.eos])
    }

    /// Commands out of order are refused with one line; a command stamped on a frame skipped before scanning takes
    /// effect on the next frame scanned; after the end of stream no cycle starts.
    @Test func deskRefusesCommandsOutOfOrder() throws {
        let desk = CycleDesk(CycleSettings())
        #expect(desk.beginRun().isEmpty)
        #expect(throws: BarscopeError.self) { try desk.end() }
        try desk.start(label: "a")
        #expect(throws: BarscopeError.self) { try desk.start(label: "b") }
        desk.stamp(frame: 5)
        let seen = desk.deliver(frame: 6, ptsNs: Self.pts(6), detections: [Self.code("4006381333931")])
        #expect(seen.closed.isEmpty)
        #expect(seen.evidenceOf == 1)
        try desk.end()
        desk.stamp(frame: 7)
        let closed = desk.deliver(frame: 7, ptsNs: Self.pts(7), detections: []).closed
        try #require(closed.count == 1)
        #expect(closed[0].startPtsNs == Self.pts(6))
        #expect(closed[0].outcome == .good)
        #expect(closed[0].cycle == 1)
        #expect(desk.counts[.good] == 1)
        #expect(desk.finishRun().isEmpty)
        // A run that fails with a cycle open: the next run closes it ("error") and takes a new start.
        let again = CycleDesk(CycleSettings())
        #expect(again.beginRun().isEmpty)
        try again.start(label: "lost")
        again.stamp(frame: 0)
        _ = again.deliver(frame: 0, ptsNs: Self.pts(0), detections: [])
        let closedByError = again.beginRun()
        #expect(closedByError.map(\.closedBy) == [.error])
        try again.start(label: "next")
        #expect(throws: BarscopeError.self) { try desk.start(label: "after the end") }
    }
}
