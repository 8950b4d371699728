import Foundation

/// Where tracked mode's searches look: the parts of the frame that changed since the search before, and the whole
/// frame only every `wholeEvery`-th search.
///
/// A code that comes into view changes the picture where it comes (it moves in, is put down, is uncovered, is lit);
/// a still background does not. Between whole searches a search reads only the areas whose 16x16 blocks differ from
/// the search before's by more than `threshold` levels a pixel on average (every other row compared; each block
/// kept for `keepSearches` searches, so that a code blurred while it moved is read once it settles), grown by
/// `margin` blocks for its quiet zones; the codes already known are rescanned where they should be, as between
/// searches. A change a known code explains is not searched: the blocks inside a code read in this frame (it is
/// there, and nothing else can be) neither become hot nor are read. (Where a code was at the search before stays
/// searched: another code can come where one left, as on a conveyor.) A picture that changed over half its area is
/// searched whole, and then, as after every whole search, no block stays searched. A code the gated searches missed
/// where nothing changes any more is found at the next whole search (a 2D code of modules under 2 px, which only a
/// full-size read finds, when the search's rolling band reaches it:
/// `SearchPolicy.small2DBand`). The frames between searches compare with the search before's picture too
/// (`unexplained`): a code that comes into view between searches is read on the frame it comes.
///
/// Sendable: the state is behind a lock (searches of one stream may run on two workers at once).
final class ChangedAreas: Sendable {
    static let block = 16
    let wholeEvery: Int
    let threshold: Int
    let keepSearches: Int
    let margin: Int

    private struct State {
        var width = 0
        var height = 0
        /// Every other row of the search before's picture.
        var previous: [UInt8] = []
        /// The search number up to which each block stays searched.
        var hotUntil: [Int] = []
        var searches = 0
    }
    private let state = Locked(State())

    /// Which of every `wholeEvery` searches reads the whole frame (streams started together search whole on
    /// different frames).
    let phase: Int

    init(wholeEvery: Int, phase: Int = 0, threshold: Int = 8, keepSearches: Int = 3, margin: Int = 2) {
        self.wholeEvery = max(1, wholeEvery)
        self.phase = phase
        self.threshold = threshold
        self.keepSearches = max(1, keepSearches)
        self.margin = max(0, margin)
    }

    /// The areas (the image's pixels) this search reads: nil for the whole frame, empty when nothing changed.
    /// - Parameter known: where the codes read in this frame are (the image's pixels, with their quiet zones).
    func areas(in luma: LumaImage, known: [PixelRect] = []) -> [PixelRect]? {
        let columns = (luma.width + Self.block - 1) / Self.block
        let rows = (luma.height + Self.block - 1) / Self.block
        let blocks = columns * rows
        let inKnown = Self.blocksInside(known, columns: columns, rows: rows)
        // Under the lock: the rows kept are the search before's (a millisecond's work at 1080p; a stream's searches
        // seldom overlap).
        let grown: [Bool]? = state.withLock { s in
            s.searches += 1
            // The first search, a new frame size, and every wholeEvery-th: the whole frame.
            guard s.width == luma.width, s.height == luma.height, (s.searches + phase) % wholeEvery != 0 else {
                s.width = luma.width
                s.height = luma.height
                Self.keep(luma, in: &s.previous)
                s.hotUntil = [Int](repeating: 0, count: blocks)
                return nil
            }
            let differences = Self.blockDifferences(luma, previous: &s.previous, columns: columns, rows: rows)
            var hot = [Bool](repeating: false, count: blocks)
            for i in 0..<blocks {
                if differences[i] > threshold && !inKnown[i] { s.hotUntil[i] = s.searches + keepSearches - 1 }
                hot[i] = s.hotUntil[i] >= s.searches && !inKnown[i]
            }
            let grown = Self.dilate(hot, columns: columns, rows: rows, by: margin)
            // Over half of it: the whole frame, and, as after every whole search, no block stays searched (this one
            // read them all). Kept, a cut's blocks made the two searches after it whole too: 20-40 ms each, on every
            // stream that saw the RTSP bench clip's loop at once.
            guard grown.reduce(0, { $0 + ($1 ? 1 : 0) }) * 2 <= grown.count else {
                s.hotUntil = [Int](repeating: 0, count: blocks)
                return nil
            }
            return grown
        }
        guard let grown else { return nil }
        return Self.rectangles(grown, columns: columns, rows: rows).compactMap { pixelRect($0, in: luma) }
    }

    /// Between searches: where the picture changed since the search before and nothing known explains it (a code
    /// that came into view since), so that a code that appears is read on the frame it appears, not at the next
    /// search (up to `trackedInterval - 1` frames later; the stock element reads it at once). Read-only: the
    /// search before's rows stay for the next search. Every 4th row compared, half a search's work (a code that can
    /// be read spans more than one block). Empty when nothing new changed or the first search has not kept its rows
    /// yet. Only what came whole: changed blocks that span at least 2 blocks each way, 4 or more (a 2D code of 21
    /// modules of 1 px spans two), not an edge that moved (a strip one block wide, as beside a moving card: a 1D code
    /// under 16 px tall may lie within one row of blocks, and the next search finds it).
    /// The groups of blocks that changed most come first, while the budget lasts (`budget` blocks; by default a
    /// 16th of the frame, and at least 256 blocks, 64 Kpx, in a small frame, where codes are large): a cut, a light
    /// switched on or a camera turned is left to the next search, a frame or three later, rather than read at great
    /// cost on every frame before it.
    /// - Parameter explained: where the codes are that this frame rescanned, and where they were at the search
    ///   before (the image's pixels).
    func unexplained(in luma: LumaImage, explained: [PixelRect], budget: Int? = nil) -> [PixelRect] {
        let columns = (luma.width + Self.block - 1) / Self.block
        let rows = (luma.height + Self.block - 1) / Self.block
        let inExplained = Self.blocksInside(explained, columns: columns, rows: rows)
        let hot: [Bool]? = state.withLock { s in
            guard s.width == luma.width, s.height == luma.height, !s.previous.isEmpty else { return nil }
            let differences = Self.blockDifferences(
                luma, previous: &s.previous, columns: columns, rows: rows, rowStep: 4, update: false)
            return differences.indices.map { differences[$0] > threshold && !inExplained[$0] }
        }
        guard let hot, hot.contains(true) else { return [] }
        let grown = Self.dilate(hot, columns: columns, rows: rows, by: margin)
        // Most changed first: a code that came into view changes every block it covers.
        let groups = Self.rectangles(grown, columns: columns, rows: rows).map { r in
            var changed = 0
            var (x0, y0, x1, y1) = (r.maxX, r.maxY, r.x, r.y)
            for y in r.y..<r.maxY {
                for x in r.x..<r.maxX where hot[y * columns + x] {
                    changed += 1
                    (x0, y0, x1, y1) = (min(x0, x), min(y0, y), max(x1, x + 1), max(y1, y + 1))
                }
            }
            return (rect: r, changed: changed, solid: x1 - x0 >= 2 && y1 - y0 >= 2 && changed >= 4)
        }
        var left = budget ?? max(256, columns * rows / 16)
        var chosen: [PixelRect] = []
        let ranked = groups.filter(\.solid).sorted {
            ($0.changed, -$0.rect.width * $0.rect.height) > ($1.changed, -$1.rect.width * $1.rect.height)
        }
        for g in ranked where g.rect.width * g.rect.height <= left {
            left -= g.rect.width * g.rect.height
            if let r = pixelRect(g.rect, in: luma) { chosen.append(r) }
        }
        return chosen
    }

    /// A rectangle of blocks in the image's pixels (nil when it lies outside).
    private func pixelRect(_ r: PixelRect, in luma: LumaImage) -> PixelRect? {
        let x0 = r.x * Self.block
        let y0 = r.y * Self.block
        let x1 = min(luma.width, (r.x + r.width) * Self.block)
        let y1 = min(luma.height, (r.y + r.height) * Self.block)
        return x1 > x0 && y1 > y0 ? PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0) : nil
    }

    /// Each block's mean absolute difference between `luma` and `previous` (its every other row, as `keep` keeps
    /// it), over every `rowStep`-th row (even), and, with `update`, `previous` replaced by `luma`'s rows. Pixel by
    /// pixel, not by statistics: bars that moved along keep their block's mean and contrast, not its pixels.
    static func blockDifferences(
        _ luma: LumaImage, previous: inout [UInt8], columns: Int, rows: Int, rowStep: Int = 2, update: Bool = true
    ) -> [Int] {
        var differences = [Int](repeating: 0, count: columns * rows)
        let src = luma.base.assumingMemoryBound(to: UInt8.self)
        let w = luma.width
        previous.withUnsafeMutableBufferPointer { old in
            let old = old.baseAddress!
            for by in 0..<rows {
                let y0 = by * block
                let y1 = min(luma.height, y0 + block)
                var samples = 0
                for y in stride(from: y0, to: y1, by: max(2, rowStep)) {
                    let row = src + y * luma.stride
                    let kept = old + (y / 2) * w
                    var x = 0
                    // Sixteen pixels (one block's width) at a time.
                    while x + block <= w {
                        let now = UnsafeRawPointer(row + x).loadUnaligned(as: SIMD16<UInt8>.self)
                        let then = UnsafeRawPointer(kept + x).loadUnaligned(as: SIMD16<UInt8>.self)
                        let d = pointwiseMax(now, then) &- pointwiseMin(now, then)
                        differences[by * columns + x / block] += Int(SIMD16<UInt16>(truncatingIfNeeded: d).wrappedSum())
                        x += block
                    }
                    while x < w {
                        differences[by * columns + x / block] += abs(Int(row[x]) - Int(kept[x]))
                        x += 1
                    }
                    if update { kept.update(from: row, count: w) }
                    samples += 1
                }
                for bx in 0..<columns {
                    differences[by * columns + bx] /= max(1, samples * min(block, w - bx * block))
                }
            }
        }
        return differences
    }

    /// The blocks wholly inside one of `rects`.
    static func blocksInside(_ rects: [PixelRect], columns: Int, rows: Int) -> [Bool] {
        var inside = [Bool](repeating: false, count: columns * rows)
        for r in rects {
            let x0 = max(0, (r.x + block - 1) / block)
            let y0 = max(0, (r.y + block - 1) / block)
            let x1 = min(columns, r.maxX / block)
            let y1 = min(rows, r.maxY / block)
            guard x1 > x0, y1 > y0 else { continue }
            for y in y0..<y1 {
                for x in x0..<x1 { inside[y * columns + x] = true }
            }
        }
        return inside
    }

    /// Every other row of `luma` into `kept`, as `blockDifferences` compares them (the buffer is reused while the
    /// frame size stays).
    static func keep(_ luma: LumaImage, in kept: inout [UInt8]) {
        let count = ((luma.height + 1) / 2) * luma.width
        if kept.count != count { kept = [UInt8](repeating: 0, count: count) }
        let src = luma.base.assumingMemoryBound(to: UInt8.self)
        kept.withUnsafeMutableBufferPointer { out in
            for y in stride(from: 0, to: luma.height, by: 2) {
                (out.baseAddress! + (y / 2) * luma.width).update(from: src + y * luma.stride, count: luma.width)
            }
        }
    }

    /// The blocks within `by` blocks of a set one.
    static func dilate(_ set: [Bool], columns: Int, rows: Int, by n: Int) -> [Bool] {
        guard n > 0 else { return set }
        var out = [Bool](repeating: false, count: set.count)
        for y in 0..<rows {
            for x in 0..<columns where set[y * columns + x] {
                for yy in max(0, y - n)...min(rows - 1, y + n) {
                    for xx in max(0, x - n)...min(columns - 1, x + n) { out[yy * columns + xx] = true }
                }
            }
        }
        return out
    }

    /// The bounding boxes (in blocks) of the set blocks' connected groups, merged until none overlap.
    static func rectangles(_ set: [Bool], columns: Int, rows: Int) -> [PixelRect] {
        var seen = [Bool](repeating: false, count: set.count)
        var boxes: [PixelRect] = []
        for start in 0..<set.count where set[start] && !seen[start] {
            var x0 = columns
            var y0 = rows
            var x1 = 0
            var y1 = 0
            var stack = [start]
            seen[start] = true
            while let i = stack.popLast() {
                let x = i % columns
                let y = i / columns
                x0 = min(x0, x)
                y0 = min(y0, y)
                x1 = max(x1, x + 1)
                y1 = max(y1, y + 1)
                // The four neighbours, without an array of offsets per block.
                func visit(_ j: Int) {
                    if set[j] && !seen[j] {
                        seen[j] = true
                        stack.append(j)
                    }
                }
                if x + 1 < columns { visit(i + 1) }
                if x > 0 { visit(i - 1) }
                if y + 1 < rows { visit(i + columns) }
                if y > 0 { visit(i - columns) }
            }
            boxes.append(PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0))
        }
        // Boxes of separate groups may still overlap (an L and a block in its corner): merged into one read.
        var merged = true
        while merged {
            merged = false
            outer: for i in 0..<boxes.count {
                for j in (i + 1)..<boxes.count where boxes[i].intersects(boxes[j]) {
                    boxes[i] = boxes[i].union(boxes[j])
                    boxes.remove(at: j)
                    merged = true
                    break outer
                }
            }
        }
        return boxes
    }
}
