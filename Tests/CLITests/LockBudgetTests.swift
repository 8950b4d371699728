import Barscope
import Foundation
import TestSupport
import Testing

/// A frame's path takes at most 10 of the project's locks: tee, crop, scanning pool, tracked search, delivery in
/// order, ledger, overlay, recording (docs/architecture.md, "A frame's path"). Debug builds count every acquisition;
/// the tool says the count when `BARSCOPE_COUNT_LOCKS` is set. A run's start and end take locks of their own, so the
/// budget is held on what one more frame costs: the same run at two lengths, their difference over the frames
/// between them.
@Suite(.serialized, .suiteLimit) struct LockBudgetTests {
    static let counted = LockCount.acquisitions != nil && ProcessInfo.processInfo.environment["BARSCOPE_BIN"] == nil

    /// The project's lock acquisitions over a run of the 1080p demo with a recording, and the events it wrote.
    static func acquisitions(frames: Int, _ mode: [String]) throws -> (locks: Int, events: Int) {
        let out = Tool.folder.appendingPathComponent("lock-budget-\(frames).mp4").path
        let r = try Tool.run(
            ["run", "demo", "--size", "1920x1080", "--frames", "\(frames)", "--record", out, "--quiet"] + mode,
            prefix: ["/usr/bin/env", "BARSCOPE_COUNT_LOCKS=1"])
        #expect(r.status == 0, "\(r.stderr)")
        let line = r.stderr.split(separator: "\n").first { $0.hasPrefix("barscope: debug: ") }
        let count = try #require(line.flatMap { Int($0.split(separator: " ")[2]) }, "no lock count in: \(r.stderr)")
        return (count, r.stdout.split(separator: "\n").count)
    }

    /// Tracked (the path: a few events a run) and every frame (three detection events a frame, each queued
    /// for the observer and written: one lock each, and at most one wake of each of the two threads that take them).
    @Test(
        .enabled(if: counted, "counts in debug builds only (this one is a release build, or BARSCOPE_BIN is set)"),
        arguments: [["--tracked"], ["--every-frame"]])
    func oneMoreFrameTakesAtMostTenLocks(mode: [String]) throws {
        // (180 frames apart: a run's own start and end vary by a few acquisitions, which this divides down.)
        let short = try Self.acquisitions(frames: 60, mode)
        let long = try Self.acquisitions(frames: 240, mode)
        let perFrame = Double(long.locks - short.locks) / 180
        let eventsPerFrame = Double(long.events - short.events) / 180
        let budget = 10 + 4 * eventsPerFrame
        #expect(perFrame > 3, "\(mode): \(perFrame) a frame: the count must see the path (tee, pool, ledger)")
        #expect(
            perFrame <= budget,
            "\(mode): \(perFrame) locks a frame, \(eventsPerFrame) events (budget \(budget)): \(short.locks), \(long.locks)"
        )
        if mode == ["--tracked"] { #expect(eventsPerFrame < 0.2, "tracked: \(eventsPerFrame) events a frame") }
    }
}
