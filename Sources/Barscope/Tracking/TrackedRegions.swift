/// A code where a search saw it, moved to where it should be now when its velocity is known.
struct Expected: Sendable {
    var detection: Detection
    var hasVelocity: Bool
}

/// Tracked mode's cheap rescans: only the neighbourhood of the codes seen a moment ago is scanned, each region
/// grown enough to catch the code where it has moved since.
enum TrackedRegions {
    /// Scans the regions around `known` (full-frame pixels) in the cropped luma image.
    /// - Parameters:
    ///   - mapping: crop → full frame (the viewfinder's offset).
    ///   - viewfinder: judges `inViewfinder`, as a full scan does.
    static func rescan(
        _ luma: LumaImage, around known: [Expected], framesSince: Int = 1, mapping: CropMapping,
        viewfinder: PixelRect?, with scanner: BarcodeReader
    ) -> [Detection] {
        var found: [Detection] = []
        var scratch: [UInt8] = []
        defer { scanner.zbarScanner.setDensity(1) }
        for (expected, area) in zip(known, regions(around: known, framesSince: framesSince, mapping: mapping, bounds: luma)) {
            let code = expected.detection
            guard let part = luma.cropped(to: area) else { continue }
            // Every line both ways: fewer lines (or one direction) read 1D codes from too few rows to box them.
            scanner.zbarScanner.setDensity(1)
            let offset = CropMapping(offsetX: mapping.offsetX + area.x, offsetY: mapping.offsetY + area.y)
            // A compact copy: ZBar's QR stage binarizes the image's whole stride × height, not just the crop.
            let got = part.compactCopy(into: &scratch) { scanner.read($0, mapping: offset, viewfinder: viewfinder) }
            // A read whose box is far smaller than the code it should be (ZBar sometimes reports a 1D code from a
            // handful of lines or one half) is not trusted in a rescan; the next search reads it whole.
            let expectedArea = Double(code.bounds.width * code.bounds.height)
            for d in got
            where Double(d.bounds.width * d.bounds.height) >= 0.5 * expectedArea && !found.contains(where: { $0.data == d.data && $0.type == d.type && $0.bounds.intersects(d.bounds) }) {
                found.append(d)
            }
        }
        return found
    }

    /// Each known code's bounds, in crop coordinates, grown by half its smaller side (at least 24 px) plus a tenth
    /// of it for every frame since it was seen, clipped to the image, one region per code (same order).
    /// (The smaller side: a long 1D code does not move further than a square one.)
    static func regions(
        around known: [Expected], framesSince: Int = 1, mapping: CropMapping, bounds image: LumaImage
    ) -> [PixelRect] {
        known.map { e in
            let b = e.detection.bounds
            let size = min(b.width, b.height)
            // Half the code each side, plus a margin per frame for what the velocity estimate misses (a quarter of
            // the code per frame when there is no estimate yet, after the first search).
            let perFrame = e.hasVelocity ? size / 10 : size / 4
            let grow = max(24, size / 2) + perFrame * max(0, framesSince - 1)
            let x0 = max(0, b.x - mapping.offsetX - grow), y0 = max(0, b.y - mapping.offsetY - grow)
            let x1 = min(image.width, b.x - mapping.offsetX + b.width + grow)
            let y1 = min(image.height, b.y - mapping.offsetY + b.height + grow)
            return PixelRect(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
        }
    }
}

import Foundation

/// The results of tracked mode's full searches, by sequence number, for the frames that rescan around them.
/// A full search is always handed to a worker before the frames that depend on it, so waiting cannot deadlock.
final class SearchBoard: @unchecked Sendable {
    // Sendable: every field is guarded by `condition`.
    private let condition = NSCondition()
    private var results: [Int: [Detection]] = [:]
    private var ended = false

    func publish(_ sequence: Int, _ detections: [Detection]) {
        condition.lock()
        results[sequence] = detections
        // Keep the last few searches only.
        if results.count > 8, let oldest = results.keys.min() { results.removeValue(forKey: oldest) }
        condition.broadcast()
        condition.unlock()
    }

    /// Where the codes of the newest finished search at or before `group` should be in frame `sequence`: each
    /// moved by its velocity between that search and the one before it (codes move; a search may be 7 frames old).
    /// Does not wait when a search exists; only before the very first one has finished does it wait (at most 5 s,
    /// or until `end`).
    func predicted(for sequence: Int, group: Int) -> (framesSince: Int, codes: [Expected]) {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: 5)
        while !ended {
            let earlier = results.keys.filter { $0 <= group }.sorted()
            if let last = earlier.last {
                let since = sequence - last
                let previous = earlier.dropLast().last
                let moved = results[last]!.map { d -> Expected in
                    guard let p = previous, let before = results[p]!.filter({ $0.data == d.data && $0.type == d.type })
                        .min(by: { $0.center.distance(to: d.center) < $1.center.distance(to: d.center) })
                    else { return Expected(detection: d, hasVelocity: false) }
                    let steps = Double(last - p)
                    let v = Point((d.center.x - before.center.x) / steps, (d.center.y - before.center.y) / steps)
                    var shifted = d
                    shifted.polygon = d.polygon.map { Point($0.x + v.x * Double(since), $0.y + v.y * Double(since)) }
                    shifted.bounds = Bounds(enclosing: shifted.polygon)
                    return Expected(detection: shifted, hasVelocity: true)
                }
                return (since, moved)
            }
            if !condition.wait(until: deadline) { break }
        }
        return (0, [])
    }

    func end() {
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
    }
}
