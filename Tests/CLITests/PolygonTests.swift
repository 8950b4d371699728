import Foundation
import TestSupport
import Testing

/// 1D polygons against the generator's truth on the small-codes scene (modules of 1 to 1.5 px, Codabar's to 2,
/// tilted, blurred, faint): the truth polygon is the bars' outline (the first bar's leading edge to the last bar's
/// trailing edge, the full bar height, no quiet zone). Each polygon of `run --every-frame --viewfinder off` is matched
/// to the truth code of its frame, type and text; at least 97 % have every corner within max(3 px, 1.5 modules) of
/// the truth's (3 px here: no module is over 2 px), and each covers the symbol (the share of the truth's area inside
/// it). Seeds 2 and 4 were held out: the fixes were chosen on seeds 1, 3 and 5 (`scripts/polygons.py` measures any).
@Suite(.serialized, .suiteLimit) struct PolygonTests {
    typealias P = (x: Double, y: Double)

    static func area(_ poly: [P]) -> Double {
        guard poly.count >= 3 else { return 0 }
        var s = 0.0
        for i in poly.indices {
            let a = poly[i]
            let b = poly[(i + 1) % poly.count]
            s += a.x * b.y - b.x * a.y
        }
        return abs(s) / 2
    }

    /// The part of `subject` inside the convex `clipper`, either winding (Sutherland-Hodgman).
    static func clip(_ subject: [P], by clipper: [P]) -> [P] {
        var signed = 0.0
        for i in clipper.indices {
            let a = clipper[i]
            let b = clipper[(i + 1) % clipper.count]
            signed += a.x * b.y - b.x * a.y
        }
        let sign = signed > 0 ? 1.0 : -1.0
        var out = subject
        for i in clipper.indices where !out.isEmpty {
            let a = clipper[i]
            let b = clipper[(i + 1) % clipper.count]
            func inside(_ q: P) -> Bool { sign * ((b.x - a.x) * (q.y - a.y) - (b.y - a.y) * (q.x - a.x)) >= 0 }
            func cut(_ q: P, _ r: P) -> P {
                let (dx, dy) = (r.x - q.x, r.y - q.y)
                let (ex, ey) = (b.x - a.x, b.y - a.y)
                let den = dx * ey - dy * ex
                let t = den == 0 ? 0 : ((a.x - q.x) * ey - (a.y - q.y) * ex) / den
                return (q.x + t * dx, q.y + t * dy)
            }
            let src = out
            out = []
            for (k, q) in src.enumerated() {
                let r = src[(k + 1) % src.count]
                if inside(q) {
                    out.append(q)
                    if !inside(r) { out.append(cut(q, r)) }
                } else if inside(r) {
                    out.append(cut(q, r))
                }
            }
        }
        return out
    }

    /// The largest distance from a corner to its truth corner, the corners paired in the cyclic order (either way
    /// round) that fits best.
    static func worstCorner(_ det: [P], _ truth: [P]) -> Double {
        guard det.count == 4, truth.count == 4 else { return .infinity }
        var best = Double.infinity
        for order in [det, Array(det.reversed())] {
            for s in 0..<4 {
                let d = (0..<4).map { i in
                    let a = order[(i + s) % 4]
                    let b = truth[i]
                    return ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot()
                }
                best = min(best, d.max()!)
            }
        }
        return best
    }

    static func points(_ any: Any?) -> [P]? {
        guard let list = any as? [[NSNumber]] else { return nil }
        return list.compactMap { $0.count == 2 ? ($0[0].doubleValue, $0[1].doubleValue) : nil }
    }

    @Test func polygonsFitTheBars() throws {
        var count: [String: Int] = [:]
        var within: [String: Int] = [:]
        var coverages: [Double] = []
        var strays: [String] = []
        for seed in ["2", "4"] {
            try Self.measure(seed, &count, &within, &coverages, &strays)
        }
        let total = count.values.reduce(0, +)
        let fit = within.values.reduce(0, +)
        // Every symbology of the scene is read between the two clips (so each one's polygons are measured).
        #expect(
            Set(count.keys).isSuperset(of: ["EAN-13", "EAN-8", "I2/5", "CODE-39", "CODE-93", "CODE-128", "Codabar"]))
        #expect(total >= 400, "only \(total) polygons matched the truth")
        #expect(
            Double(fit) >= 0.97 * Double(total),
            "\(fit) of \(total) polygons within 3 px; per symbology \(count.map { "\($0.key) \(within[$0.key] ?? 0)/\($0.value)" }.sorted()); \(strays.prefix(5))"
        )
        let mean = coverages.reduce(0, +) / Double(max(1, coverages.count))
        let covered = coverages.filter { $0 >= 0.9 }.count
        #expect(mean >= 0.95, "mean coverage \(mean)")
        #expect(Double(covered) >= 0.97 * Double(coverages.count), "\(covered) of \(coverages.count) cover 90 %")
    }

    /// One clip's polygons, per symbology: how many, how many within 3 px, each one's coverage.
    static func measure(
        _ seed: String, _ count: inout [String: Int], _ within: inout [String: Int], _ coverages: inout [Double],
        _ strays: inout [String]
    ) throws {
        let path = Tool.folder.appendingPathComponent("polygons-\(seed).mp4").path
        let truthPath = Tool.folder.appendingPathComponent("polygons-\(seed).jsonl").path
        let made = try Tool.run([
            "generate", path, "--scene", "small", "--seed", seed, "--size", "960x540", "--frames", "60", "--truth",
            truthPath,
        ])
        #expect(made.status == 0, "\(made.stderr)")
        var truth: [String: [P]] = [:]
        for line in try String(contentsOfFile: truthPath, encoding: .utf8).split(separator: "\n") {
            guard let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let frame = o["frame"] as? Int, let codes = o["codes"] as? [[String: Any]]
            else { continue }
            for c in codes {
                if let t = c["type"] as? String, let d = c["data"] as? String, let p = Self.points(c["polygon"]) {
                    truth["\(frame) \(t) \(d)"] = p
                }
            }
        }
        let r = try Tool.run(["run", path, "--every-frame", "--viewfinder", "off", "--quiet"], timeout: 600)
        #expect(r.status == 0, "\(r.stderr)")
        for line in r.stdout.split(separator: "\n") {
            guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                o["event"] as? String == "detection", let frame = o["frame"] as? Int, let t = o["type"] as? String,
                let d = o["data"] as? String, let polygon = Self.points(o["polygon"]),
                let outline = truth["\(frame) \(t) \(d)"]
            else { continue }
            let worst = Self.worstCorner(polygon, outline)
            count[t, default: 0] += 1
            if worst <= 3 {
                within[t, default: 0] += 1
            } else {
                strays.append("frame \(frame) \(t) \(d): \(worst) px")
            }
            coverages.append(Self.area(Self.clip(outline, by: polygon)) / Self.area(outline))
        }
    }
}
