/// Whether something moved in the viewfinder (`--cycles motion`): each scanned frame's crop is summed into a coarse
/// grid of block means, and a frame has moved when enough blocks changed against the frame before it. Block means
/// are blind to what repeats finer than a block (a belt's rollers, sensor noise) and see a parcel's edge at once.
enum ViewActivity {
    static let columns = 16
    static let rows = 12
    /// A block changed: its mean moved by more than this many grey levels.
    static let levels = 10
    /// Motion: at least this many blocks changed.
    static let blocks = 3

    /// The block means of a luma image, from an 8 × 8 sampling of each block.
    static func signature(_ luma: LumaImage) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: columns * rows)
        guard luma.width >= columns, luma.height >= rows else { return out }
        let p = luma.base.assumingMemoryBound(to: UInt8.self)
        for by in 0..<rows {
            let y0 = by * luma.height / rows
            let y1 = (by + 1) * luma.height / rows
            for bx in 0..<columns {
                let x0 = bx * luma.width / columns
                let x1 = (bx + 1) * luma.width / columns
                var sum = 0
                for sy in 0..<8 {
                    let row = p + (y0 + (y1 - y0) * sy / 8) * luma.stride
                    for sx in 0..<8 { sum += Int(row[x0 + (x1 - x0) * sx / 8]) }
                }
                out[by * columns + bx] = UInt8(sum / 64)
            }
        }
        return out
    }

    /// Whether `now` differs from `before` enough to call it motion.
    static func moved(from before: [UInt8]?, to now: [UInt8]?) -> Bool {
        guard let before, let now, before.count == now.count else { return false }
        var changed = 0
        for i in before.indices where abs(Int(before[i]) - Int(now[i])) > levels { changed += 1 }
        return changed >= blocks
    }
}
