import Foundation

/// How read cycles open and close, and what a good read is (`[cycles]` in a pipeline file, `--cycles` and friends).
public struct CycleSettings: Sendable, Equatable {
    /// Cycles open when a code appears in the viewfinder and close when it has been empty for `gapNs` (a fixed-mount
    /// reader's "presentation mode"); commands (`cycle start`, `cycle end`) work in every mode.
    public var auto = false
    /// Auto cycles also open on motion in the viewfinder, and stay open while it moves (`--cycles motion`): a parcel
    /// without a readable code is a no-read instead of nothing.
    public var motion = false
    /// A cycle still open this long after it opened closes with what it has (stream time).
    public var timeoutNs: UInt64? = nil
    /// Auto mode: how long the viewfinder stays empty before the cycle closes.
    public var gapNs: UInt64 = 500_000_000
    /// What a right code is: nil accepts any.
    public var expect: CodeExpectation? = nil
    /// How many right codes a parcel carries: more is `multiple`, fewer is `noread` (nil: any number is good).
    public var expectCount: Int? = nil

    public init() {}
}

/// The expected code: a regular expression (searched in the data; anchor it with `^...$`) or a list of exact codes.
public enum CodeExpectation: Sendable, Equatable {
    case pattern(String)
    case list(Set<String>)

    /// `@FILE` (one code a line; blank lines and `#` comments skipped) or a regular expression.
    /// - Throws: ``BarscopeError/badValue`` naming the file or the pattern.
    public static func parse(_ text: String) throws -> CodeExpectation {
        if text.hasPrefix("@") {
            let path = String(text.dropFirst())
            guard let data = FileContents.read(atPath: path) else {
                throw BarscopeError.badValue("--expect @\(path): cannot read the file")
            }
            let codes = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
            guard !codes.isEmpty else { throw BarscopeError.badValue("--expect @\(path): no code in the file") }
            return .list(Set(codes))
        }
        guard !text.isEmpty, (try? NSRegularExpression(pattern: text)) != nil else {
            throw BarscopeError.badValue("--expect '\(text)': not a regular expression")
        }
        return .pattern(text)
    }

    public func matches(_ data: String) -> Bool {
        switch self {
        case .list(let codes): return codes.contains(data)
        case .pattern(let p): return data.range(of: p, options: .regularExpression) != nil
        }
    }
}

/// A command that opens or closes a cycle, stamped on the frame that reached the tee when it was given.
public enum CycleCommand: Sendable, Equatable {
    case start(label: String?)
    case end
}

/// One closed read cycle: its codes and its verdict (the `cycle` event).
public struct CycleResult: Sendable, Equatable {
    public enum Outcome: String, Sendable, CaseIterable {
        case good, noread, multiple, mismatch
    }
    public struct Code: Sendable, Equatable {
        public var type: String
        public var data: String
        public var framesSeen: Int
        public var firstPtsNs: UInt64?
        public var lastPtsNs: UInt64?
        /// Whether it is an expected code.
        public var expected: Bool
    }
    public var cycle: Int
    public var label: String?
    public var outcome: Outcome
    public var codes: [Code]
    public var startPtsNs: UInt64?
    public var endPtsNs: UInt64?
    /// What closed it (the event's `closed_by`).
    public var closedBy: Closer
    public enum Closer: String, Sendable {
        /// `cycle end`.
        case command
        /// A new `cycle start` while it was open.
        case restart
        /// Open longer than the timeout.
        case timeout
        /// Auto: no code for the gap's length.
        case gap
        /// The end of the stream.
        case eos
        /// The run failed (a camera that went away) and the next one began.
        case error
    }
    /// What opened a cycle.
    enum Opener: Sendable {
        case command
        case auto
    }
    /// The frame that shows the verdict best: the first with the most codes in view, or, for a no-read, the one on
    /// which the cycle closed (what the camera saw then).
    public var evidenceFrame: Int
}

/// Read cycles over frames in stream order: a frame belongs to a cycle when its pts lies inside the window, whatever
/// order the scanning threads finished in (the sequencer gives frames here in order). Pure: no clock, no threads.
public struct ReadCycles: Sendable {
    public let settings: CycleSettings
    private struct Open {
        var number: Int
        var label: String?
        var startPtsNs: UInt64?
        var codes: [CycleResult.Code] = []
        /// The last frame with a code or (motion mode) movement in the viewfinder.
        var lastActivePtsNs: UInt64?
        var opened: CycleResult.Opener
        var best: (frame: Int, count: Int)? = nil
    }
    private var open: Open? = nil
    private var started = 0
    public private(set) var counts: [CycleResult.Outcome: Int] = [:]
    private var lastPts: UInt64? = nil
    private var lastFrame = 0
    /// The last frame given showed the open cycle's codes better than any before it (its evidence so far).
    public private(set) var lastFrameIsEvidence = false

    public init(_ settings: CycleSettings) { self.settings = settings }

    public var isOpen: Bool { open != nil }
    /// The open cycle's number and label (the overlay shows them).
    public var current: (number: Int, label: String?)? { open.map { ($0.number, $0.label) } }
    public var total: Int { counts.values.reduce(0, +) }

    /// One frame, in stream order, with the commands stamped on it; returns the cycles it closed.
    public mutating func frame(
        _ number: Int, ptsNs: UInt64?, detections: [Detection], commands: [CycleCommand] = [], moved: Bool = false
    ) -> [CycleResult] {
        var closed: [CycleResult] = []
        lastFrameIsEvidence = false
        let pts = ptsNs ?? lastPts
        lastPts = pts
        lastFrame = number
        for c in commands {
            switch c {
            case .end:
                if open != nil { closed.append(close(at: pts, frame: number, by: .command)) }
            case .start(let label):
                if open != nil { closed.append(close(at: pts, frame: number, by: .restart)) }
                begin(label: label, at: pts, by: .command)
            }
        }
        if let o = open, let limit = settings.timeoutNs, let start = o.startPtsNs, let now = pts, now >= start + limit {
            closed.append(close(at: start + limit, frame: number, by: .timeout))
        }
        let seen = detections.filter(\.inViewfinder)
        let active = !seen.isEmpty || (settings.motion && moved)
        if open == nil, settings.auto, active { begin(label: nil, at: pts, by: .auto) }
        guard var o = open else { return closed }
        if active {
            o.lastActivePtsNs = pts
            open = o
        }
        if !seen.isEmpty {
            var fresh = Set<String>()
            for d in seen {
                let key = d.type + "\u{0}" + d.data
                guard fresh.insert(key).inserted else { continue }
                if let i = o.codes.firstIndex(where: { $0.type == d.type && $0.data == d.data }) {
                    o.codes[i].framesSeen += 1
                    o.codes[i].lastPtsNs = pts
                } else {
                    o.codes.append(
                        .init(
                            type: d.type, data: d.data, framesSeen: 1, firstPtsNs: pts, lastPtsNs: pts,
                            expected: settings.expect?.matches(d.data) ?? true))
                }
            }
            if fresh.count > (o.best?.count ?? 0) {
                o.best = (number, fresh.count)
                lastFrameIsEvidence = true
            }
            open = o
        } else if !active, o.opened == .auto, let last = o.lastActivePtsNs, let now = pts, now >= last + settings.gapNs
        {
            closed.append(close(at: now, frame: number, by: .gap))
        }
        return closed
    }

    /// End of stream (or of a run that failed, `by: .error`): the open cycle closes with what it has.
    public mutating func finish(by reason: CycleResult.Closer = .eos) -> [CycleResult] {
        guard open != nil else { return [] }
        return [close(at: lastPts, frame: lastFrame, by: reason)]
    }

    private mutating func begin(label: String?, at pts: UInt64?, by: CycleResult.Opener) {
        started += 1
        open = Open(number: started, label: label, startPtsNs: pts, opened: by)
    }

    private mutating func close(at pts: UInt64?, frame: Int, by: CycleResult.Closer) -> CycleResult {
        let o = open!
        open = nil
        let right = o.codes.filter(\.expected)
        let outcome: CycleResult.Outcome
        if o.codes.isEmpty {
            outcome = .noread
        } else if right.isEmpty {
            outcome = .mismatch
        } else if let n = settings.expectCount, right.count > n {
            outcome = .multiple
        } else if let n = settings.expectCount, right.count < n {
            outcome = .noread
        } else {
            outcome = .good
        }
        counts[outcome, default: 0] += 1
        return CycleResult(
            cycle: o.number, label: o.label, outcome: outcome, codes: o.codes, startPtsNs: o.startPtsNs,
            endPtsNs: pts, closedBy: by, evidenceFrame: outcome == .noread ? frame : (o.best?.frame ?? frame))
    }
}
