import Foundation
import Testing

@testable import Barscope

/// The hard-code memory on made profiles: one code's bars seen again in the next frames, moved, turned the other
/// way, or replaced by other bars (`HardCodeTests` reads real clips with it).
@Suite struct HardCodeMemoryTests {
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
    /// every frame after the first finds the trace, and the average lies on this frame's samples, its noise under
    /// half of one frame's after a dozen frames.
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

    /// The same bars with `across` the other way (the tensor's angle turned by half a turn): the trace is met
    /// from the other side, its samples reversed, and the average still lies on this frame's samples.
    @Test func theSameBarsSeenTheOtherWayMatch() {
        let code = Self.bars(seed: 5)
        let memory = HardCodeMemory()
        var rng = SplitMix64(seed: 2)
        let count = 192 * Int(Self.oversample)
        let center = Point(300, 80)
        let start = -96.0
        // Frame 0 across +x: sample i at x = 300 - 96 + i/4, the first bar at x = 220 (from = -16 + i/4 - ...).
        let forward = Self.profile(code, start: center.x + start - 220, count: count, sigma: 2, rng: &rng)
        _ = memory.sighting(forward, frame: 0, center: center, across: Point(1, 0), start: start)
        // Frame 1 across -x: sample i at x = 300 + 96 - i/4; the profile is the forward one reversed.
        let backward = Array(Self.profile(code, start: center.x + start - 220, count: count, sigma: 2, rng: &rng).reversed())
        let s = memory.sighting(backward, frame: 1, center: center, across: Point(-1, 0), start: start)
        let clean = Array(
            Self.profile(code, start: center.x + start - 220, count: count, sigma: 0, rng: &rng).reversed())
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
        memory.vote(s0.trace, [ean])
        let s1 = memory.sighting(p, frame: 1, center: Point(101, 100), across: Point(1, 0), start: -96)
        #expect(s1.trace == s0.trace && s1.texts[ean] == 1)
        #expect(HardCodeReader.believed([ean: 1], earlier: s1.texts)?.0 == ean)
        #expect(HardCodeReader.believed([other: 1], earlier: s1.texts) == nil, "another text the earlier frame never read")
        // CODE-128's check stands on one version; two texts both believed give none.
        let code128 = HardCodeReader.Text(type: "CODE-128", data: "BARSCOPE")
        #expect(HardCodeReader.believed([code128: 1], earlier: [:])?.0 == code128)
        #expect(HardCodeReader.believed([code128: 1, ean: 1], earlier: s1.texts) == nil)
    }
}
