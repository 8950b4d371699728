import Synchronization

/// Tracked mode's decisions, apart from the pixels and the pool: which frames search the frame (the others rescan
/// around the codes known, and go with the search before them), what a search reads besides its areas (the
/// full-size read for small 2D codes; a band of the frame for those that stand still), and what a cut since a
/// search changes. Frame places in the lane's order in, decisions out; its few memories are atomics (several
/// workers ask at once). Tested without GStreamer (`SearchPolicyTests`).
final class SearchPolicy: Sendable {
    /// A search every `interval` frames (1: every frame searches).
    let interval: Int
    /// The first search after the stream's first frame: live streams started together take different phases, so
    /// that they do not all search on the same frames.
    let phase: Int
    /// The full-size read for small 2D codes runs at every search while such a code is in view, else at every
    /// `small2DEvery`-th.
    let small2DEvery: Int
    /// Searches read only the areas that changed (`ChangedAreas`): small 2D codes that stand still are then read a
    /// band of the frame at a time.
    let gated: Bool

    private let searches = Atomic<Int>(0)
    private let small2DInView = Atomic<Bool>(false)
    private let bandTurn = Atomic<Int>(0)
    private let bandDue = Atomic<Bool>(false)
    private let searchBeforeCut = Atomic<Int>(-1)

    init(interval: Int, phase: Int = 0, small2DEvery: Int, gated: Bool) {
        self.interval = max(1, interval)
        self.phase = phase % self.interval
        self.small2DEvery = max(1, small2DEvery)
        self.gated = gated
    }

    // MARK: Which frames search

    /// The search a frame goes with: the last one at or before it. The first frame is a search, then every
    /// `interval`-th from the phase on (the frames before the phase go with the first); with an interval of 1,
    /// every frame.
    func search(for sequence: Int) -> Int {
        guard interval > 1 else { return sequence }
        guard sequence >= phase else { return 0 }
        return sequence - (sequence - phase) % interval
    }

    func isSearch(_ sequence: Int) -> Bool { search(for: sequence) == sequence }

    /// A frame between searches: it rescans only around the known codes (the pool's light frames).
    func isBetweenSearches(_ sequence: Int) -> Bool { interval > 1 && !isSearch(sequence) }

    // MARK: What a search reads

    /// A search begins: its number among the searches, and whether it reads the searched areas for small 2D codes at
    /// full size (a code of that kind was in view at the last such read, or it is due).
    func beginSearch() -> (number: Int, small2D: Bool) {
        let n = searches.add(1, ordering: .relaxed).oldValue
        return (n, small2DInView.load(ordering: .relaxed) || n % small2DEvery == 0)
    }

    /// The band of the frame search `number` reads for small 2D codes, if one is due: at every other due search, or
    /// the first search after it that reads changed areas only (`areasOnly`), so that a search never takes both the
    /// whole frame and a band.
    func band(forSearch number: Int, areasOnly: Bool, height: Int) -> (y: Int, height: Int)? {
        if gated && number % (2 * small2DEvery) == small2DEvery { bandDue.store(true, ordering: .relaxed) }
        guard areasOnly, bandDue.exchange(false, ordering: .relaxed) else { return nil }
        return Self.small2DBand(height: height, turn: bandTurn.add(1, ordering: .relaxed).oldValue)
    }

    /// What the last full-size read for small 2D codes found: while it finds one, every search reads again.
    func small2DRead(found: Bool) { small2DInView.store(found, ordering: .relaxed) }

    /// The frame's rows in up to `small2DBands` bands, each grown by `small2DOverlap` rows on either side, so that
    /// every 2D code of up to twice that height (64 modules under 2 px) lies wholly inside one (a frame under 256
    /// rows is one band). The rows of the band for `turn` (0, 1, 2, ... in turn): the first row and the count.
    static func small2DBand(height: Int, turn: Int) -> (y: Int, height: Int) {
        let bands = max(1, min(small2DBands, height / (2 * small2DOverlap)))
        let k = turn % bands
        let y0 = max(0, k * height / bands - small2DOverlap)
        let y1 = min(height, (k + 1) * height / bands + small2DOverlap)
        return (y0, y1 - y0)
    }
    static let small2DBands = 4
    static let small2DOverlap = 64

    // MARK: Cuts

    /// A frame after search `search` lost every known code at once (a cut): the frames after it up to the next
    /// search leave the changed areas to that search, and look again for its codes on sparse lines only.
    func cut(after search: Int) { searchBeforeCut.store(search, ordering: .relaxed) }

    /// Whether a frame after search `search` found a cut.
    func isAfterCut(_ search: Int) -> Bool { searchBeforeCut.load(ordering: .relaxed) == search }
}
