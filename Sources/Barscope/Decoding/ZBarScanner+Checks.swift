import CZBar

/// Checks on a read from its hits and the other reads (piled hits, parts, joined halves, thin bars); symbology kinds.
extension ZBarScanner {
    /// Whether a 1D read's hits are piled at one end of it (or on one scan line), so that they cannot give its
    /// extent: their spread along the scan is shorter than the code could be at a pixel a module (its symbology's
    /// fewest modules for this text; 8 px for a symbology whose length is not known), or under 2 px across it.
    /// (Seen: a tilted I2/5 read on two lines at its first bars, hits 9 px apart, boxed 9 px long and dropped.)
    static func hitsPiled(_ spread: Bounds, alongX: Bool, type: String, data: String) -> Bool {
        let least = Plausibility.leastLength(type: type, data: data) ?? 8
        return Double(alongX ? spread.width : spread.height) < least || (alongX ? spread.height : spread.width) < 2
    }

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

    /// The decoder's run through the first few hits that give one: the shorter median of them (a line that left
    /// the code and read on elsewhere runs longer, never shorter).
    static func decodedRun(hits: [Point], span: (Point) -> (Point, Point)?) -> (Point, Point)? {
        let runs = hits.prefix(5).compactMap(span).sorted { $0.0.distance(to: $0.1) < $1.0.distance(to: $1.1) }
        return runs.isEmpty ? nil : runs[(runs.count - 1) / 2]
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

    /// Whether a 1D code's modules are under 2.5 px, judged from its hits' extent and its symbology's fewest modules
    /// (unknown: thin). Only then is the direction across its bars searched from its profile: the structure tensor
    /// judges thicker bars well, and the profile search (39 angles, each over the code's length on 21 lines) cost
    /// 14 ms a frame on the 1080p demo's three large 1D codes in tracked mode, where every frame's codes are boxed.
    static func thinBars(_ points: [Point], axis: Point, name: String, data: String) -> Bool {
        guard let fewest = Plausibility.minimumModules(type: name, data: data), fewest > 0 else { return true }
        let along = points.map { $0.x * axis.x + $0.y * axis.y }
        return ((along.max() ?? 0) - (along.min() ?? 0)) / Double(fewest) < 2.5
    }

    /// Variable-length symbologies without a check character that ZBar demands: a part of one can read as a
    /// shorter valid code.
    static func partsReadAsCodes(_ type: zbar_symbol_type_t) -> Bool { partsReadAsCodesTypes.contains(type) }

    /// The same, by the reported name (both engines name them as ZBar does).
    static func partsReadAsCodes(name: String) -> Bool { partsReadAsCodesNames.contains(name) }

    private static let partsReadAsCodesTypes = [ZBAR_I25, ZBAR_CODE39, ZBAR_CODABAR]
    private static let partsReadAsCodesNames = Set(
        partsReadAsCodesTypes.map { String(cString: zbar_get_symbol_name($0)) })

    /// EAN and UPC, whose two halves ZBar may read on different scan lines.
    static func halvesJoined(_ type: zbar_symbol_type_t) -> Bool {
        [ZBAR_EAN8, ZBAR_EAN13, ZBAR_UPCA, ZBAR_UPCE, ZBAR_ISBN10, ZBAR_ISBN13].contains(type)
    }

    static func isTwoDimensional(_ type: zbar_symbol_type_t) -> Bool {
        type == ZBAR_QRCODE || type == ZBAR_SQCODE
    }

    /// 2D by the reported name (both engines' names): these have four real corners and a character set.
    static func isTwoDimensional(name: String) -> Bool {
        ["QR-Code", "SQ-Code", "Micro-QR", "DataMatrix", "Aztec", "PDF417", "MaxiCode"].contains(name)
    }
}
