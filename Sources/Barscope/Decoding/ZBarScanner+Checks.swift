import CZBar

/// A read's lines from its hits; checks on a read against the other reads (parts, joined halves); symbology kinds.
extension ZBarScanner {
    /// The hits ordered by their distance across the scan from the middle one's line, nearest first (ties in
    /// their own order).
    static func middleFirst(_ hits: [Point], alongX: Bool) -> [Point] {
        guard hits.count > 2 else { return hits }
        func across(_ p: Point) -> Double { alongX ? p.y : p.x }
        let middle = hits.map(across).sorted()[hits.count / 2]
        return hits.indices.sorted { a, b in
            let (da, db) = (abs(across(hits[a]) - middle), abs(across(hits[b]) - middle))
            return da != db ? da < db : a < b
        }.map { hits[$0] }
    }

    /// A read's lines, each from its first bar's leading edge to its last bar's trailing edge: ZBar's decoder run
    /// along the lines of the first few hits (`decoded`), those within a pixel or a thirtieth of the shorter median's
    /// length (a line that left the code and read on over bars beyond it, an I2/5 with no check digit to stop it,
    /// runs longer, never shorter). Where the decoder gives none (a symbology it cannot place, EAN halves joined
    /// from different lines), the extent along the scan of the hits that can be the code's (`onCode`), not exact (the outline walks out from it to the
    /// code's ends); for hits piled within a few pixels, the runs of bars through them (`walked`), the longest
    /// and those nearly as long.
    static func readLines(
        hits: [Point], axis: Point, least: Double = 8, onCode: (Point) -> Bool = { _ in true },
        decoded: (Point) -> (Point, Point)?,
        walked: (Point) -> (Point, Point, offImage: Bool)?
    ) -> (lines: [(Point, Point)], exact: Bool) {
        func length(_ r: (Point, Point)) -> Double { r.0.distance(to: r.1) }
        func inOrder(_ r: (Point, Point)) -> (Point, Point) { r.0.dot(axis) <= r.1.dot(axis) ? r : (r.1, r.0) }
        let runs = hits.prefix(5).compactMap(decoded).map(inOrder).sorted { length($0) < length($1) }
        if !runs.isEmpty {
            let reference = length(runs[(runs.count - 1) / 2])
            return (runs.filter { abs(length($0) - reference) <= max(1, reference / 30) }, true)
        }
        // The hits' own extent along the scan, where it is as long as the code can be (its symbology's fewest
        // modules at a pixel each, `least`): hits piled at one end or in the middle (an EAN's halves read on
        // different lines end at its centre guard) cannot span the code, and the runs of bars walked through them
        // say more; the extent when no walk finds any.
        let along = hits.filter(onCode).sorted { $0.dot(axis) < $1.dot(axis) }
        let extent = along.count >= 2 ? along.last!.dot(axis) - along.first!.dot(axis) : 0
        if extent >= max(8, least) { return ([(along.first!, along.last!)], false) }
        let walks = hits.prefix(5).compactMap(walked).map { inOrder(($0.0, $0.1)) }
        guard let longest = walks.map(length).max() else {
            return extent >= 8 ? ([(along.first!, along.last!)], false) : ([], false)
        }
        return (walks.filter { length($0) >= 0.95 * longest }, false)
    }

    /// The hits no farther outside the run `ends` (along the scan) than they are from its line across the scan,
    /// give or take `slack` (about a module).
    static func hits(_ hits: [Point], within ends: (Point, Point), alongX: Bool, slack: Double) -> [Point] {
        let (lo, hi) =
            alongX
            ? (min(ends.0.x, ends.1.x), max(ends.0.x, ends.1.x)) : (min(ends.0.y, ends.1.y), max(ends.0.y, ends.1.y))
        let line = alongX ? ends.0.y : ends.0.x
        return hits.filter { hit in
            let (along, off) = alongX ? (hit.x, abs(hit.y - line)) : (hit.y, abs(hit.x - line))
            return along >= lo - off - slack && along <= hi + off + slack
        }
    }

    /// A scan line through a tilted I2/5, CODE-39 or Codabar that leaves it through its bars' ends reads a part of
    /// it, which these symbologies take for a shorter code; where another line of the same image read the whole,
    /// the part lies on it: a read whose text is inside a longer read's of the same symbology, and whose centre is
    /// inside that read's box, is that read's part, and is dropped (seen on a 720p clip: `742332` in
    /// `7423321081`, read on one line).
    static func withoutParts(_ reads: [Detection]) -> [Detection] {
        guard reads.count > 1, reads.contains(where: { partsReadAsCodes(name: $0.type) }) else { return reads }
        return reads.filter { part in
            !(partsReadAsCodes(name: part.type)
                && reads.contains { whole in
                    whole.type == part.type && whole.data.count > part.data.count && whole.data.contains(part.data)
                        && whole.bounds.contains(part.center)
                })
        }
    }

    /// ZBar joins an EAN's or a UPC's halves as its scan lines meet them, and a line across two such codes side by
    /// side can join one code's half to the other's (seen on a low-bitrate 1080p clip: two codes side by side gave
    /// two more numbers): a third number, whose check digit passes one time in ten. A read
    /// whose left half is one read's and whose right half is another's, those two read in separate places, is such
    /// a join, and is dropped. (Two codes that share a half, read apart, are not: neither is made of the other two.)
    static func withoutJoinedHalves(_ reads: [Detection]) -> [Detection] {
        let kinds: Set<String> = ["EAN-13", "UPC-A", "ISBN-13", "EAN-8"]
        // (Almost every image has fewer than three such reads: nothing to compare, nothing made.)
        guard reads.lazy.filter({ kinds.contains($0.type) }).count >= 3 else { return reads }
        func halves(_ d: Detection) -> (left: String, right: String)? {
            guard kinds.contains(d.type), d.data.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            let digits = d.data.count == 12 ? "0" + d.data : d.data
            switch digits.count {
            case 13: return (String(digits.prefix(7)), String(digits.suffix(6)))
            case 8: return (String(digits.prefix(4)), String(digits.suffix(4)))
            default: return nil
            }
        }
        let split = reads.map(halves)
        return reads.indices.filter { i in
            guard let mine = split[i] else { return true }
            let others = reads.indices.filter { $0 != i && split[$0] != nil && reads[$0].data != reads[i].data }
            let lefts = others.filter { split[$0]!.left == mine.left }
            let rights = others.filter { split[$0]!.right == mine.right }
            let joined = lefts.contains { l in
                rights.contains { r in reads[l].data != reads[r].data && !reads[l].bounds.intersects(reads[r].bounds) }
            }
            return !joined
        }.map { reads[$0] }
    }

    /// Whether an EAN-13 text a UPC-E can write was read as a UPC-E inside a longer code
    /// (`ZBarLineDecoder.readsUPCEInsideLongerCode`) on most of the read's lines (up to seven hits, the middle's
    /// first) that decode it as a UPC-E.
    func readsUPCEInsideLongerCode(_ bytes: [UInt8], hits: [Point], axis: Point, in image: LumaImage) -> Bool {
        var (judged, inside) = (0, 0)
        for hit in hits.prefix(7) {
            guard
                let r = ZBarLineDecoder.readsUPCEInsideLongerCode(
                    bytes, through: hit, scan: axis, settings: settings, in: image)
            else { continue }
            judged += 1
            if r { inside += 1 }
        }
        return judged > 0 && 2 * inside > judged
    }

    /// Variable-length symbologies without a check character that ZBar demands: a part of one can read as a
    /// shorter valid code.
    static func partsReadAsCodes(_ type: zbar_symbol_type_t) -> Bool { partsReadAsCodesTypes.contains(type) }

    /// The same, by the reported name (both engines name them as ZBar does).
    static func partsReadAsCodes(name: String) -> Bool { partsReadAsCodesNames.contains(name) }

    private static let partsReadAsCodesTypes = [ZBAR_I25, ZBAR_CODE39, ZBAR_CODABAR]
    private static let partsReadAsCodesNames = Set(
        partsReadAsCodesTypes.map { String(cString: zbar_get_symbol_name($0)) })

    static func isTwoDimensional(_ type: zbar_symbol_type_t) -> Bool {
        type == ZBAR_QRCODE || type == ZBAR_SQCODE
    }

    /// 2D by the reported name (both engines' names): these have four real corners and a character set.
    static func isTwoDimensional(name: String) -> Bool {
        ["QR-Code", "SQ-Code", "Micro-QR", "DataMatrix", "Aztec", "PDF417", "MaxiCode"].contains(name)
    }
}
