import Foundation
import Synchronization

/// The read cycles of one controller, across its runs. A command is given at any moment (the `--control` file, the
/// service, a person), waits for the next frame at the tee and is stamped on it, so that it takes effect exactly at
/// that frame's stream time; the scanner branch, which delivers frames in order, runs the cycles over them
/// (`ReadCycles`) with the commands stamped up to each. Counts since start, and what the overlay shows, live here.
///
/// Sendable: everything is behind one lock (taken after the sequencer's, never before it); `quiet` is an atomic.
public final class CycleDesk: Sendable {
    private struct State {
        var cycles: ReadCycles
        var waiting: [CycleCommand] = []
        var stamped: [(frame: Int, command: CycleCommand)] = []
        /// What commands see: a cycle is open (from a command given, or the cycles' own opening).
        var open: (label: String?, byCommand: Bool)? = nil
        var counts: [CycleResult.Outcome: Int] = [:]
        var last: (result: CycleResult, at: ContinuousClock.Instant)? = nil
        /// The stream has ended: no cycle can start.
        var ended = false
        var numbered = 0
        /// The previous frame's view signature (`--cycles motion`).
        var view: [UInt8]? = nil
    }
    private let state: Locked<State>
    public let settings: CycleSettings
    /// No cycle can be open: none opens by itself (neither `auto` nor `motion`) and no command has come yet. The
    /// per-frame calls then return at once, without the lock. Only ever goes from true to false.
    private let quiet: Atomic<Bool>

    public init(_ settings: CycleSettings) {
        self.settings = settings
        state = Locked(State(cycles: ReadCycles(settings)))
        quiet = Atomic(!settings.auto && !settings.motion)
    }

    // MARK: commands (any thread)

    /// `cycle start [LABEL]`.
    /// - Throws: ``BarscopeError/badValue`` when a cycle is open or the stream has ended; nothing changes then.
    public func start(label: String?) throws {
        try state.withLock { s in
            if s.ended { throw BarscopeError.badValue("cycle start: the stream has ended") }
            if let open = s.open {
                let name = open.label.map { " ('\($0)')" } ?? ""
                throw BarscopeError.badValue("cycle start: a cycle\(name) is open; 'cycle end' first")
            }
            s.open = (label, true)
            s.waiting.append(.start(label: label))
            quiet.store(false, ordering: .releasing)
        }
    }

    /// `cycle end`.
    /// - Throws: ``BarscopeError/badValue`` when no cycle is open.
    public func end() throws {
        try state.withLock { s in
            guard s.open != nil else { throw BarscopeError.badValue("cycle end: no cycle is open") }
            s.open = nil
            s.waiting.append(.end)
            quiet.store(false, ordering: .releasing)
        }
    }

    // MARK: the run's stages

    /// A run begins: frame numbers start again at 0; commands not yet stamped wait for its first frame. A cycle the
    /// last run left open (it failed: a camera that went away) closes here, `closed_by` "error".
    /// - Returns: that cycle, to report.
    func beginRun() -> [CycleResult] {
        state.withLock { s in
            var closed = s.cycles.finish(by: .error)
            record(&closed, &s)
            if !closed.isEmpty && !s.waiting.contains(where: { $0 != .end }) { s.open = nil }
            s.stamped.removeAll()
            s.view = nil
            s.ended = false
            s.cycles = ReadCycles(settings)
            return closed
        }
    }

    /// The tee's streaming thread: the commands given since the last frame take effect on this one.
    func stamp(frame: Int) {
        guard !quiet.load(ordering: .acquiring) else { return }
        state.withLock { s in
            guard !s.waiting.isEmpty else { return }
            for c in s.waiting { s.stamped.append((frame, c)) }
            s.waiting.removeAll()
        }
    }

    /// The scanner branch, frames in order: the cycles over this frame (a live source's frame skipped before
    /// scanning hands its commands to the next one scanned).
    /// - Returns: the cycles it closed, numbered since start, and the number of the open cycle when this frame is its
    ///   best evidence so far (its snapshot).
    func deliver(frame: Int, ptsNs: UInt64?, detections: [Detection], view: [UInt8]? = nil)
        -> (closed: [CycleResult], evidenceOf: Int?)
    {
        guard !quiet.load(ordering: .acquiring) else { return ([], nil) }
        return state.withLock { s in
            var commands: [CycleCommand] = []
            while let first = s.stamped.first, first.frame <= frame {
                commands.append(first.command)
                s.stamped.removeFirst()
            }
            let wasOpen = s.cycles.isOpen
            let moved = ViewActivity.moved(from: s.view, to: view)
            if view != nil { s.view = view }
            var closed = s.cycles.frame(frame, ptsNs: ptsNs, detections: detections, commands: commands, moved: moved)
            record(&closed, &s)
            // Opened or closed by the cycles themselves (auto, timeout, gap): what commands see follows, unless a
            // command given since says otherwise.
            if s.cycles.isOpen && !wasOpen && s.open == nil { s.open = (s.cycles.current?.label, false) }
            // (Checked only when a cycle closed by itself: nothing is built on the frames in between.)
            if !s.cycles.isOpen, closed.contains(where: { $0.closedBy != .command && $0.closedBy != .restart }),
                !s.waiting.contains(where: { $0 != .end }), !s.stamped.contains(where: { $0.command != .end })
            {
                s.open = nil
            }
            // The open cycle is the next to be numbered (cycles close in order).
            return (closed, s.cycles.lastFrameIsEvidence ? s.numbered + 1 : nil)
        }
    }

    /// The file name of a cycle's snapshot (in `--snapshots DIR`).
    static func snapshotName(_ cycle: Int) -> String { String(format: "cycle-%06d.png", cycle) }

    /// End of stream (the run's scanner branch is done): the open cycle closes; no new one may start.
    func finishRun() -> [CycleResult] {
        state.withLock { s in
            var closed = s.cycles.finish()
            record(&closed, &s)
            s.open = nil
            s.waiting.removeAll()
            s.stamped.removeAll()
            s.ended = true
            return closed
        }
    }

    private func record(_ closed: inout [CycleResult], _ s: inout State) {
        for i in closed.indices {
            s.numbered += 1
            closed[i].cycle = s.numbered
            s.counts[closed[i].outcome, default: 0] += 1
            s.last = (closed[i], ContinuousClock.now)
        }
    }

    // MARK: readers

    /// Cycles closed since start, by result.
    public var counts: [CycleResult.Outcome: Int] { state.withLock { $0.counts.unshared } }

    /// What the overlay shows: the open cycle's label (nil label: an open cycle without one), and the last result
    /// for a second after it closed.
    var display: (open: Bool, label: String?, last: CycleResult?) {
        guard !quiet.load(ordering: .acquiring) else { return (false, nil, nil) }
        return state.withLock { s in
            let recent = s.last.flatMap { ContinuousClock.now - $0.at < .seconds(1) ? $0.result : nil }
            return (s.cycles.isOpen, s.cycles.current?.label, recent)
        }
    }
}

extension [CycleResult.Outcome: Int] {
    /// `12 cycles: 10 good, 1 noread, 0 multiple, 1 mismatch (read rate 83.3 %)`, or nil before the first.
    public var summary: String? {
        guard let rate = readRate else { return nil }
        let total = values.reduce(0, +)
        let each = CycleResult.Outcome.allCases.map { "\(self[$0] ?? 0) \($0.rawValue)" }.joined(separator: ", ")
        return "\(total) cycle\(total == 1 ? "" : "s"): \(each) (read rate \(String(format: "%.1f", rate * 100)) %)"
    }

    /// Good reads over all cycles (nil before the first).
    public var readRate: Double? {
        let total = values.reduce(0, +)
        return total > 0 ? Double(self[.good] ?? 0) / Double(total) : nil
    }
}
