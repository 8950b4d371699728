/// The settings that may change while a graph plays (decoder and overlay style), shared between the code that
/// changes them (the runner, the controller) and the threads that use them; each change bumps a generation, and
/// each user rebuilds what depends on it (a worker its reader, the overlay its renderer) when it sees a new one.
///
/// Sendable: everything is behind a lock.
public final class LiveSettings: Sendable {
    public struct Decoder: Sendable {
        public var settings: ScannerSettings
        public var engine: Engine
        public var generation: Int
    }
    public struct Style: Sendable {
        public var style: OverlayStyle
        public var generation: Int
    }

    private let decoderState: Locked<Decoder>
    private let styleState: Locked<Style>

    public init(settings: ScannerSettings, engine: Engine, style: OverlayStyle) {
        decoderState = Locked(Decoder(settings: settings, engine: engine, generation: 0))
        styleState = Locked(Style(style: style, generation: 0))
    }

    public var decoder: Decoder { decoderState.withLock { $0 } }
    public var style: Style { styleState.withLock { $0 } }
    /// The generations alone, for the per-frame check (no copy of the settings).
    public var decoderGeneration: Int { decoderState.withLock { $0.generation } }
    public var styleGeneration: Int { styleState.withLock { $0.generation } }

    public func set(settings: ScannerSettings? = nil, engine: Engine? = nil) {
        decoderState.withLock { d in
            if let settings { d.settings = settings }
            if let engine { d.engine = engine }
            d.generation += 1
        }
    }

    public func set(style: OverlayStyle) {
        styleState.withLock { s in
            s.style = style
            s.generation += 1
        }
    }
}
