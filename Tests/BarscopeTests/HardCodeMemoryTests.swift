import Foundation
import TestSupport
import Testing

@testable import Barscope

/// The hard-code memory on made profiles: one code's bars seen again in the next frames, moved, turned the other
/// way, or replaced by other bars (`HardCodeTests` reads real clips with it).
@Suite(.suiteLimit) struct HardCodeMemoryTests {
    static let oversample = HardCodeReader.oversample

    /// Bars of random widths (1-3 px), 160 px of them between quiet zones of 16 px, as a profile sampled at
    /// `oversample` to the pixel from `start` (px, relative to the code's first bar), plus noise of `sigma` levels.
    static func bars(seed: UInt64) -> [(from: Double, to: Double)] {
        var rng = SplitMix64(seed: seed)
        var out: [(Double, Double)] = []
        var x = 0.0
        while x < 160 {
            let width = 1 + Double(Int(3 * rng.unit()))
            out.append((x, x + width))
            x += width + 1 + Double(Int(3 * rng.unit()))
        }
        return out
    }

    static func profile(
        _ bars: [(from: Double, to: Double)], start: Double, count: Int, sigma: Double, rng: inout SplitMix64
    ) -> [Float] {
        (0..<count).map { i in
            let x = start + Double(i) / oversample
            let dark = bars.contains { x >= $0.from && x < $0.to }
            return Float((dark ? 100 : 130) + sigma * rng.gaussian())
        }
    }

    static func rms(_ a: [Float], _ b: [Float]) -> Double {
        (zip(a, b).map { Double($0 - $1) * Double($0 - $1) }.reduce(0, +) / Double(a.count)).squareRoot()
    }

    /// The code drifts 0.75 px a frame across its bars and its region's centre jumps about as cells come and go:
    /// every frame after the first finds the trace, the correlation adds the drift to the geometry's shift, and
    /// the average lies on this frame's samples, its noise under 0.4 of one frame's after a dozen frames.
    @Test func aDriftingCodeIsAveragedOnItsOwnSamples() {
        let code = Self.bars(seed: 3)
        let memory = HardCodeMemory()
        var rng = SplitMix64(seed: 11)
        let count = 192 * Int(Self.oversample)
        var last: (average: [Float], clean: [Float])? = nil
        for frame in 0..<12 {
            // The code's first bar at x = 100 + 0.75 × frame; the region's centre wanders by up to 4 px from it.
            let origin = 100 + 0.75 * Double(frame)
            let center = Point(origin + 80 + Double([0, 3, -4, 2][frame % 4]), 50)
            let start = -96.0
            // Sample i lies at centre.x + start + i/4: relative to the first bar, at that minus the origin.
            let from = center.x + start - origin
            let noisy = Self.profile(code, start: from, count: count, sigma: 6, rng: &rng)
            let clean = Self.profile(code, start: from, count: count, sigma: 0, rng: &rng)
            let s = memory.sighting(noisy, frame: frame, center: center, across: Point(1, 0), start: start)
            if frame == 0 {
                #expect(s.average == nil)
            } else if let average = s.average {
                last = (average, clean)
                // The drift (0.75 px, 3 samples a frame) is what the correlation adds to the geometry's shift: the
                // bars moved on, so the trace's sample of them lies 3 before the one the places predict.
                #expect(
                    s.shift.map { $0.found - $0.predicted } == -3, "frame \(frame): \(String(describing: s.shift))")
            } else {
                Issue.record("frame \(frame) found no trace")
            }
        }
        #expect(memory.count == 1)
        if let last {
            // One frame's noise is 6 levels (RMS); the average's over the bars (the ends past the trace's reach
            // are this frame's alone), after twelve frames, under 0.4 of it (measured 1.9; a sample off
            // anywhere would be far more).
            let bars = (16 * Int(Self.oversample))..<(176 * Int(Self.oversample))
            let error = Self.rms(Array(last.average[bars]), Array(last.clean[bars]))
            #expect(error < 2.4, "the average is off by \(error) levels RMS")
        }
    }

    /// The same bars with `across` the other way (the tensor's angle turned by half a turn), the region's centre
    /// moved and its profile starting elsewhere: the trace is met from the other side, its samples reversed, the
    /// shift the geometry predicts is the one found, and the average lies on this frame's samples.
    @Test func theSameBarsSeenTheOtherWayMatch() {
        let code = Self.bars(seed: 5)
        let memory = HardCodeMemory()
        var rng = SplitMix64(seed: 2)
        let firstBar = 220.0
        // Frame 0 across +x from (300, 80), samples from -96 px: sample i at x = 204 + i/4.
        let forward = Self.profile(code, start: 300 - 96 - firstBar, count: 768, sigma: 2, rng: &rng)
        _ = memory.sighting(forward, frame: 0, center: Point(300, 80), across: Point(1, 0), start: -96)
        // Frame 1 across -x from (305, 80), samples from -90 px: sample i at x = 305 + 90 - i/4, 700 of them.
        func backward(sigma: Double) -> [Float] {
            (0..<700).map { i in
                let x = 305 + 90 - Double(i) / Self.oversample - firstBar
                let dark = code.contains { x >= $0.from && x < $0.to }
                return Float((dark ? 100 : 130) + sigma * rng.gaussian())
            }
        }
        let seen = backward(sigma: 2)
        let s = memory.sighting(seen, frame: 1, center: Point(305, 80), across: Point(-1, 0), start: -90)
        #expect(s.shift.map { $0.found == $0.predicted } == true, "shift \(String(describing: s.shift))")
        let clean = backward(sigma: 0)
        if let average = s.average {
            // Two frames of noise 2: about 1.4 levels when aligned; a sample off would be far more.
            #expect(Self.rms(average, clean) < 2)
        } else {
            Issue.record("the bars seen the other way found no trace")
        }
        #expect(memory.count == 1)
    }

    /// Other bars in the same place (another code came in) start a trace of their own, and a trace not seen for
    /// more than `forgetAfter` frames is dropped.
    @Test func otherBarsStartTheirOwnTraceAndOldTracesGo() {
        let memory = HardCodeMemory()
        var rng = SplitMix64(seed: 4)
        let count = 192 * Int(Self.oversample)
        let center = Point(200, 200)
        let first = Self.profile(Self.bars(seed: 1), start: -16, count: count, sigma: 1, rng: &rng)
        let other = Self.profile(Self.bars(seed: 2), start: -16, count: count, sigma: 1, rng: &rng)
        _ = memory.sighting(first, frame: 0, center: center, across: Point(1, 0), start: -96)
        #expect(memory.sighting(other, frame: 1, center: center, across: Point(1, 0), start: -96).average == nil)
        #expect(memory.count == 2)
        // Far from both in place: a third trace; then, long after, the first three are forgotten.
        _ = memory.sighting(first, frame: 2, center: Point(600, 200), across: Point(1, 0), start: -96)
        #expect(memory.count == 3)
        _ = memory.sighting(
            first, frame: 2 + HardCodeMemory.forgetAfter, center: Point(900, 500), across: Point(1, 0), start: -96)
        #expect(memory.count == 2, "the traces of frames 0 and 1 are gone, frame 2's and the new one stay")
    }

    /// Frames scanned out of order (two workers): a late one is averaged in as well, and the trace keeps the
    /// newest frame's number, so it is not forgotten early.
    @Test func aLateFrameIsAveragedInAndTheTraceKeepsTheNewest() {
        let memory = HardCodeMemory()
        var rng = SplitMix64(seed: 6)
        let code = Self.bars(seed: 8)
        func seen(_ frame: Int) -> HardCodeMemory.Sighting {
            let p = Self.profile(code, start: -16, count: 768, sigma: 3, rng: &rng)
            return memory.sighting(p, frame: frame, center: Point(400, 300), across: Point(1, 0), start: -96)
        }
        _ = seen(0)
        _ = seen(2)
        let late = seen(1)
        #expect(late.average != nil, "the late frame found the trace")
        // Frame 12 is 10 after the newest (2), not after the late one (1): the trace is still there.
        let after = seen(2 + HardCodeMemory.forgetAfter)
        #expect(after.average != nil && memory.count == 1)
    }

    /// A full memory drops the trace seen longest ago, not the one started first (a code in view for a long time
    /// keeps its average while texture comes and goes).
    @Test func aFullMemoryDropsTheTraceSeenLongestAgo() {
        let memory = HardCodeMemory()
        var rng = SplitMix64(seed: 10)
        let code = Self.profile(Self.bars(seed: 12), start: -16, count: 768, sigma: 1, rng: &rng)
        // The code first, then enough texture to fill the memory, the code seen again every frame.
        _ = memory.sighting(code, frame: 0, center: Point(20, 20), across: Point(1, 0), start: -96)
        var texture = 0
        for frame in 1...4 {
            _ = memory.sighting(code, frame: frame, center: Point(20, 20), across: Point(1, 0), start: -96)
            for _ in 0..<(HardCodeMemory.capacity / 3) {
                // Each its own place (40 px apart: never matched).
                let p = Self.profile(
                    Self.bars(seed: UInt64(1000 + texture)), start: -16, count: 64, sigma: 1, rng: &rng)
                _ = memory.sighting(
                    p, frame: frame, center: Point(Double(100 + 40 * texture), 500), across: Point(1, 0), start: -96)
                texture += 1
            }
        }
        #expect(memory.count == HardCodeMemory.capacity)
        let again = memory.sighting(code, frame: 5, center: Point(20, 20), across: Point(1, 0), start: -96)
        #expect(again.average != nil, "the code's trace was dropped for texture")
    }

    /// The texts a trace's frames read come back with the next sighting of it, and a weakly checked read believed
    /// on one version needs one of them.
    @Test func textsReadEarlierConfirmAWeakRead() {
        let memory = HardCodeMemory()
        var rng = SplitMix64(seed: 9)
        let p = Self.profile(Self.bars(seed: 7), start: -16, count: 768, sigma: 1, rng: &rng)
        let ean = HardCodeReader.Text(type: "EAN-13", data: "4006381333931")
        let other = HardCodeReader.Text(type: "EAN-13", data: "4006381333948")
        let s0 = memory.sighting(p, frame: 0, center: Point(100, 100), across: Point(1, 0), start: -96)
        #expect(HardCodeReader.believed([ean: 1], earlier: s0.texts) == nil, "one version, no earlier frame")
        memory.vote(s0.trace, [ean], believed: nil)
        let s1 = memory.sighting(p, frame: 1, center: Point(101, 100), across: Point(1, 0), start: -96)
        #expect(s1.trace == s0.trace && s1.texts[ean] == 1)
        #expect(HardCodeReader.believed([ean: 1], earlier: s1.texts)?.0 == ean)
        #expect(
            HardCodeReader.believed([other: 1], earlier: s1.texts) == nil, "another text the earlier frame never read")
        // CODE-128's check stands on one version; two texts both believed give none.
        let code128 = HardCodeReader.Text(type: "CODE-128", data: "BARSCOPE")
        #expect(HardCodeReader.believed([code128: 1], earlier: [:])?.0 == code128)
        #expect(HardCodeReader.believed([code128: 1, ean: 1], earlier: s1.texts) == nil)
        // A frame that believes a text the trace never read (other bars took its place) starts its texts again.
        memory.vote(s1.trace, [other], believed: other)
        let s2 = memory.sighting(p, frame: 2, center: Point(101, 100), across: Point(1, 0), start: -96)
        #expect(s2.texts == [other: 1])
    }
}
