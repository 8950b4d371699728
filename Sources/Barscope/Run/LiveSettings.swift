import Synchronization

/// What the user set that may change while playing (viewfinder, decoder, engine, overlay style): the one home of
/// these settings for a controller and every run it starts, restarts included.
///
/// Like a gst-plugins-rs element's `Settings`: one lock, values copied out, and a generation per part that the
/// per-frame paths compare instead of copying (a worker rebuilds its reader, the overlay its renderer, the region
/// timeline its region, only when their part's generation moved).
///
/// Sendable: the values are behind one lock; each part's generation is also kept in an atomic, which the per-frame
/// paths read without the lock (the value changes under the lock first, then its generation moves).
public final class LiveSettings: Sendable {
    public struct Values: Sendable, Equatable {
        public var viewfinder: Viewfinder
        /// Frames over which the last viewfinder change moves (0: at once).
        public var viewfinderAnimation = 0
        public var scanner: ScannerSettings
        public var engine: Engine
        public var style: OverlayStyle
        public var viewfinderGeneration = 0
        public var decoderGeneration = 0
        public var styleGeneration = 0
    }

    private let state: Locked<Values>
    private let viewfinderMoves = Atomic<Int>(0)
    private let decoderMoves = Atomic<Int>(0)
    private let styleMoves = Atomic<Int>(0)

    public init(_ c: RunConfiguration) {
        state = Locked(Values(viewfinder: c.viewfinder, scanner: c.scanner, engine: c.engine, style: c.style))
    }

    public var values: Values { state.withLock { $0 } }
    var viewfinderGeneration: Int { viewfinderMoves.load(ordering: .acquiring) }
    var decoderGeneration: Int { decoderMoves.load(ordering: .acquiring) }
    var styleGeneration: Int { styleMoves.load(ordering: .acquiring) }

    public func setViewfinder(_ viewfinder: Viewfinder, animationFrames: Int = 0) {
        state.withLock { s in
            s.viewfinder = viewfinder
            s.viewfinderAnimation = max(0, animationFrames)
            s.viewfinderGeneration += 1
            viewfinderMoves.store(s.viewfinderGeneration, ordering: .releasing)
        }
    }

    /// Decoder settings and, if given, the engine; nil keeps what is set.
    public func setDecoder(_ settings: ScannerSettings? = nil, engine: Engine? = nil) {
        state.withLock { s in
            if let settings { s.scanner = settings }
            if let engine { s.engine = engine }
            s.decoderGeneration += 1
            decoderMoves.store(s.decoderGeneration, ordering: .releasing)
        }
    }

    public func setStyle(_ style: OverlayStyle) {
        state.withLock { s in
            s.style = style
            s.styleGeneration += 1
            styleMoves.store(s.styleGeneration, ordering: .releasing)
        }
    }

    /// Changes the current style in place, so that successive changes add up (`style box-color=...` then
    /// `style labels=off` keeps both).
    public func updateStyle(_ change: (inout OverlayStyle) throws -> Void) rethrows {
        try state.withLock { s in
            var style = s.style
            try change(&style)
            s.style = style
            s.styleGeneration += 1
            styleMoves.store(s.styleGeneration, ordering: .releasing)
        }
    }

    /// A configuration with the current settings: what the next run (a restart) starts from.
    public func applied(to c: RunConfiguration) -> RunConfiguration {
        let v = values
        var c = c
        c.viewfinder = v.viewfinder
        c.scanner = v.scanner
        c.engine = v.engine
        c.style = v.style
        return c
    }
}
