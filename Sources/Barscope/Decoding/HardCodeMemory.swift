import Foundation

/// What the frames before this one showed of each hard code: its bar profile, averaged over them.
///
/// One frame's profile of a faint code is its bars plus that frame's noise (the sensor's, the encoder's), and the
/// noise is new in every frame while the bars stay. So each profile `HardCodeReader` takes is matched to the trace
/// of the same bars in the frames just before (near the same place, at nearly the same angle, and alike once
/// aligned), shifted onto this frame's samples, and averaged in: after a few frames ZBar reads bars that no single
/// frame holds clearly enough. The geometry stays this frame's (the box is where the code is now); only the
/// profile's values are averaged.
///
/// A trace also keeps the texts its frames' own profiles read (never the average's, which is mostly the frames
/// before): a read that needs a second look to be believed (a symbology with a weak check) gets it from an earlier
/// frame's own read of the same bars, whose noise was its own, as well as from a second version of this profile.
///
/// One per stream, shared by the stream's workers (frames may come a little out of order); a trace not seen for
/// more than `forgetAfter` frames is dropped, so a code that leaves takes its trace with it.
final class HardCodeMemory: Sendable {
    /// One code's bars as the last frames saw them.
    struct Trace {
        let id: Int
        var frame: Int
        var center: Point
        /// Unit vector across the bars; sample `i` lies at `center + (start + i / oversample) × across`.
        var across: Point
        var start: Double
        var profile: [Float]
        /// Frames averaged in.
        var frames: Int
        /// The frames that read each text.
        var texts: [HardCodeReader.Text: Int] = [:]
    }

    /// What the memory holds of the bars just seen: the trace (to `vote` in), this frame's profile averaged with
    /// the earlier ones (nil on the first sighting), the texts the earlier frames' own profiles read, and the
    /// shift from this profile's samples to the trace's: predicted by the geometry, and found.
    struct Sighting {
        let trace: Int
        let average: [Float]?
        let texts: [HardCodeReader.Text: Int]
        let shift: (predicted: Int, found: Int)?
    }

    private let traces = Locked<(all: [Trace], next: Int)>(([], 0))

    /// The weight of the newest frame once a trace holds ten: the older frames fade (the code rocks and drifts;
    /// after the shift they still line up within a fraction of a pixel over a few dozen frames). Chosen on the hard
    /// scene's seeds 1-3 (`scripts/bench hard`): 0.1 read 30.7 % of the hard set, 0.25 29.9 %, 0.4 fewer.
    static let newest: Float = 0.1
    /// Frames after which a trace not seen again is dropped: more than this many frames apart, two sightings are
    /// not matched.
    static let forgetAfter = 10
    /// How far apart (px, degrees) two frames' regions of one code may be, how far the shift found from the
    /// geometry may be refined (samples), and how alike the aligned profiles must be.
    static let nearby = 16.0
    static let angle = 4.0
    static let refine = 8
    static let alike = 0.6
    /// The most traces kept (a frame of texture makes many regions); the one seen longest ago goes first.
    static let capacity = 256

    init() {}

    var count: Int { traces.withLock { $0.all.count } }

    /// Averages `profile` (this frame's, sampled as `Trace` says, `center` in full-frame pixels) with the trace of
    /// the same bars, and keeps the result as that trace; bars no earlier frame showed start a trace.
    func sighting(_ profile: [Float], frame: Int, center: Point, across: Point, start: Double) -> Sighting {
        // The match and the merge run under the lock: a trace another worker updates between them would have its
        // samples moved under the shift found. Only the stream's own workers wait here, for a correlation over the
        // one or two traces nearby (tens of microseconds; ZBar's scans of a profile take far longer).
        traces.withLock { state -> Sighting in
            state.all.removeAll { frame - $0.frame > Self.forgetAfter }
            guard let (index, t, shift) = Self.match(profile, frame, center, across, start, in: state.all) else {
                if state.all.count >= Self.capacity,
                    let oldest = state.all.indices.min(by: { state.all[$0].frame < state.all[$1].frame })
                {
                    state.all.remove(at: oldest)
                }
                let id = state.next
                state.next += 1
                state.all.append(
                    Trace(
                        id: id, frame: frame, center: center, across: across, start: start, profile: profile,
                        frames: 1))
                return Sighting(trace: id, average: nil, texts: [:], shift: nil)
            }
            let old = state.all[index]
            let weight = max(Self.newest, 1 / Float(t.frames + 1))
            var merged = profile
            for i in merged.indices {
                let j = i + shift.found
                if j >= 0 && j < t.profile.count { merged[i] = (1 - weight) * t.profile[j] + weight * profile[i] }
            }
            // The trace takes this frame's samples and geometry; a frame that comes late (after a newer one, from
            // another worker) is averaged in all the same, and the trace keeps the newer frame's number.
            state.all[index] = Trace(
                id: old.id, frame: max(frame, old.frame), center: center, across: across, start: start,
                profile: merged, frames: old.frames + 1, texts: old.texts)
            return Sighting(trace: old.id, average: merged, texts: old.texts, shift: shift)
        }
    }

    /// Counts one more frame whose own profile read each of `texts` in the trace. When this frame believed a text
    /// the trace's frames never read (`believed`), other bars have taken the trace's place: its texts start again.
    func vote(_ trace: Int, _ texts: Set<HardCodeReader.Text>, believed: HardCodeReader.Text?) {
        traces.withLock { state in
            guard let k = state.all.firstIndex(where: { $0.id == trace }) else { return }
            if let believed, state.all[k].texts[believed] == nil { state.all[k].texts = [:] }
            for text in texts { state.all[k].texts[text, default: 0] += 1 }
        }
    }

    /// The trace of the same bars in another recent frame (its index, and the trace as seen the way `across`
    /// points), and the shift from this profile's samples to its.
    private static func match(
        _ profile: [Float], _ frame: Int, _ center: Point, _ across: Point, _ start: Double, in traces: [Trace]
    ) -> (index: Int, faced: Trace, shift: (predicted: Int, found: Int))? {
        let cosine = cos(angle * .pi / 180)
        var best: (index: Int, faced: Trace, shift: (predicted: Int, found: Int), score: Double)? = nil
        for (k, trace) in traces.enumerated() where trace.frame != frame {
            guard abs(trace.frame - frame) <= forgetAfter, trace.center.distance(to: center) < nearby,
                abs(trace.across.dot(across)) > cosine
            else { continue }
            let t = facing(trace, across)
            // Where this frame's sample 0 lies in the trace's samples, from the geometry, then refined.
            let offset = (center - t.center).dot(t.across)
            let predicted = Int(((offset + start - t.start) * HardCodeReader.oversample).rounded())
            guard let (found, score) = aligned(profile, t.profile, near: predicted), score >= alike,
                score > best?.score ?? -1
            else { continue }
            best = (k, t, (predicted, found), score)
        }
        return best.map { ($0.index, $0.faced, $0.shift) }
    }

    /// The trace as seen across the bars the way `across` points: its samples reversed if it points the other way.
    static func facing(_ t: Trace, _ across: Point) -> Trace {
        guard t.across.dot(across) < 0 else { return t }
        let last = Double(t.profile.count - 1) / HardCodeReader.oversample
        var r = t
        r.across = Point(-t.across.x, -t.across.y)
        r.start = -t.start - last
        r.profile = t.profile.reversed()
        return r
    }

    /// The shift (trace sample = this sample + shift) within `refine` of `predicted` at which the two profiles are
    /// most alike (Pearson correlation over their overlap), if they overlap over most of this one.
    ///
    /// Only the region's own samples count, not the margins added past it for the quiet zones: what lies around a
    /// code (its card's edge, the belt) is the same for the next code that comes to that place.
    static func aligned(_ p: [Float], _ q: [Float], near predicted: Int) -> (shift: Int, score: Double)? {
        let margin = Int(HardCodeReader.margin * HardCodeReader.oversample)
        let inner = p.count > 4 * margin ? margin..<(p.count - margin) : 0..<p.count
        var best: (shift: Int, score: Double)? = nil
        for shift in (predicted - refine)...(predicted + refine) {
            let lo = max(inner.lowerBound, -shift)
            let hi = min(inner.upperBound, q.count - shift)
            guard hi - lo >= inner.count * 7 / 10 else { continue }
            var sp = 0.0
            var sq = 0.0
            var spp = 0.0
            var sqq = 0.0
            var spq = 0.0
            for i in lo..<hi {
                let a = Double(p[i])
                let b = Double(q[i + shift])
                sp += a
                sq += b
                spp += a * a
                sqq += b * b
                spq += a * b
            }
            let n = Double(hi - lo)
            let varP = spp - sp * sp / n
            let varQ = sqq - sq * sq / n
            guard varP > 0, varQ > 0 else { continue }
            let r = (spq - sp * sq / n) / (varP * varQ).squareRoot()
            if r > best?.score ?? -2 { best = (shift, r) }
        }
        return best
    }
}
