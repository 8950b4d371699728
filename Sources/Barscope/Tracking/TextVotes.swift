/// What the decoders said of each EAN and UPC text at its place over the recent frames, for the tracker to reject
/// a misread with a valid check digit that repeats itself (a misread that ink spread, blur or a wrapper makes is made
/// alike on every line and in most frames, so one frame is no verdict, and neither is the number of lines that agree
/// in it). Two votes:
///
/// - **The second decoder's.** The frames in which zxing-cpp read the text there too (`engine` "both") and those in
///   which it read another text of the code there (a dispute: `BarcodeReader.takeDisputes`). Where the disputes
///   outnumber the agreements, the text is not reported there.
/// - **ZBar against itself.** Where ZBar reads the code two ways at once (another text of its symbology at its
///   place, read in this frame or the one before, and not rejected by the second decoder's votes), the text fewer
///   of its scan lines read over the recent frames is not reported: a worn or wrapped print gives some lines one
///   number and others another, frame after frame, and the text more lines read is the better estimate. A label
///   swapped for another is not read two ways at once (the old text is no longer read when the new one is), so it
///   is reported as before.
///
/// A text's votes last while it goes on being read or disputed there: `window` frames without either end them.
struct TextVotes {
    private struct Votes {
        let type: String
        let data: String
        var center: Point
        /// Where it was last read there.
        var polygon: [Point]
        var diagonal: Double
        var lastFrame: Int
        var agreed = 0
        var disputed = 0
        /// ZBar's scan lines that read the text there, frame by frame (the last `window` frames).
        var lines: [(frame: Int, count: Int)] = []
    }
    private var votes: [Votes] = []
    let window: Int

    init(window: Int) { self.window = max(1, window) }

    /// Counts one frame: its reported reads and the reads the decoders disputed in it.
    mutating func count(frame: Int, reads: [Detection], disputed: [Detection]) {
        votes.removeAll { frame - $0.lastFrame > window }
        for d in disputed where BarcodeReader.retail.contains(d.type) { vote(d, frame: frame, disputed: true) }
        for d in reads where BarcodeReader.retail.contains(d.type) { vote(d, frame: frame, disputed: false) }
    }

    /// Whether read `d` (counted in this frame) is rejected: its text's votes at its place (the nearest of its
    /// text within `reach` of its diagonal and last frame) say it is a misread.
    func reject(_ d: Detection, frame: Int, reach: (Double, Int) -> Double) -> Bool {
        guard BarcodeReader.retail.contains(d.type) else { return false }
        let own = votes.filter {
            $0.type == d.type && $0.data == d.data
                && $0.center.distance(to: d.center) <= reach($0.diagonal, $0.lastFrame)
        }.min { $0.center.distance(to: d.center) < $1.center.distance(to: d.center) }
        guard let v = own else { return false }
        if v.disputed > v.agreed { return true }
        guard d.engine != "both" else { return false }
        func recent(_ v: Votes) -> Int { v.lines.reduce(0) { frame - $1.frame < window ? $0 + $1.count : $0 } }
        let mine = recent(v)
        return votes.contains {
            $0.type == v.type && $0.data != v.data && $0.disputed <= $0.agreed
                && Self.sameCode($0, d) && ($0.lines.last?.frame ?? .min) >= frame - 1 && recent($0) > mine
        }
    }

    private mutating func vote(_ d: Detection, frame: Int, disputed: Bool) {
        let diag = d.bounds.diagonal
        let i =
            votes.firstIndex {
                $0.type == d.type && $0.data == d.data && $0.center.distance(to: d.center) <= max($0.diagonal, diag)
            }
            ?? {
                votes.append(
                    Votes(
                        type: d.type, data: d.data, center: d.center, polygon: d.polygon, diagonal: diag,
                        lastFrame: frame))
                return votes.count - 1
            }()
        votes[i].center = d.center
        votes[i].polygon = d.polygon
        votes[i].diagonal = diag
        votes[i].lastFrame = frame
        if disputed {
            votes[i].disputed += 1
        } else {
            if d.engine == "both" { votes[i].agreed += 1 }
            votes[i].lines.append((frame, d.quality))
        }
        votes[i].lines.removeAll { frame - $0.frame >= window }
    }

    /// Whether the text `v` was read on the same code as read `d`: the middle of either on the other's bars
    /// (inside its outline). Two codes stacked or side by side are two codes, however close.
    private static func sameCode(_ v: Votes, _ d: Detection) -> Bool {
        v.center.lies(inside: d.polygon) || d.center.lies(inside: v.polygon)
    }
}
