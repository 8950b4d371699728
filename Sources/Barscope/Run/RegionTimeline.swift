import CBarscope
import CGStreamer
import Synchronization

/// The viewfinder region of every frame, decided once where the stream splits (the tee), so that the crop, the
/// scanner's mapping back to full-frame pixels and the overlay use the same rectangle for the same frame, also
/// while the viewfinder changes during play (at once, or moving smoothly over a few frames). The stamp travels on
/// the buffer itself (`Stamp.attach(to:)`: a second reference-timestamp meta, which both branches' buffers keep)
/// and in the frame's ledger entry for the overlay; this keeps only the region of the moment.
///
/// Sendable: all state is behind one lock (its generation also in an atomic, to look at without it), but for
/// `steady`, which only the tee's streaming thread touches (`stampNext` and `setFrame` are called from the tee's
/// sink pad, for its buffers and its caps, in stream order).
final class RegionTimeline: @unchecked Sendable {
    /// What one frame was given: its size, its region (nil = the whole frame) and the dashed secondary region
    /// inside it.
    struct Stamp: Equatable, Sendable {
        var frame: Size? = nil
        var region: PixelRect? = nil
        var secondary: PixelRect? = nil
        /// What the scanner reads: the region grown by a twentieth of its longer side (at least 8 px) within the
        /// frame, on even pixels. A code wholly inside the viewfinder near its edge has its quiet zone outside it,
        /// and ZBar reads no I2/5 or CODE-39 without one; reads that are not wholly inside the region are not
        /// reported. Nil: the whole frame.
        var scanArea: PixelRect? {
            guard let r = region, let frame else { return nil }
            let m = max(8, max(r.width, r.height) / 20) & ~1
            let x0 = max(0, r.x - m) & ~1
            let y0 = max(0, r.y - m) & ~1
            let x1 = min(frame.width, r.maxX + m)
            let y1 = min(frame.height, r.maxY + m)
            return PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
        }
    }

    private struct State {
        var frame: Size? = nil
        var viewfinder: Viewfinder
        /// The settings' viewfinder generation this region follows.
        var generation: Int
        var current = Stamp()
        var animation: (from: PixelRect, to: PixelRect, step: Int, steps: Int)? = nil
        /// The size of the last frame stamped.
        var lastStamped: Size? = nil
    }

    private let settings: LiveSettings
    private let state: Locked<State>
    /// `State.generation`, readable without the lock (written under it).
    private let seenGeneration: Atomic<Int>
    /// The stamp every frame gets until the viewfinder or the frame's size changes (nil while a change or an
    /// animation is under way): a frame in a steady stream is stamped without the lock.
    private var steady: Stamp? = nil

    init(settings: LiveSettings) {
        self.settings = settings
        let v = settings.values
        state = Locked(State(viewfinder: v.viewfinder, generation: v.viewfinderGeneration))
        seenGeneration = Atomic(v.viewfinderGeneration)
    }

    var viewfinder: Viewfinder { state.withLock { $0.viewfinder } }
    var frame: Size? { state.withLock { $0.frame } }
    /// The region of the newest frame stamped (or of the size just set).
    var current: Stamp { state.withLock { $0.current } }

    /// Checks a viewfinder against the stream's size before it is set.
    /// - Throws: ``BarscopeError/badValue`` when it has no region in the current frame size.
    func check(_ viewfinder: Viewfinder) throws {
        guard let frame, viewfinder.enabled, viewfinder.region(in: frame) == nil else { return }
        throw BarscopeError.noRegion(frame, viewfinder)
    }

    /// The stream's size is known or has changed (caps): the region follows it at once.
    /// - Returns: nil when the viewfinder has no region in a frame of this size.
    func setFrame(_ size: Size) -> Stamp? {
        steady = nil
        let v = settings.values
        return state.withLock { s in
            s.frame = size
            s.animation = nil
            s.viewfinder = v.viewfinder
            s.generation = v.viewfinderGeneration
            seenGeneration.store(s.generation, ordering: .relaxed)
            let region = s.viewfinder.region(in: size)
            if s.viewfinder.enabled && region == nil { return nil }
            s.current = Self.stamp(region, s.viewfinder, size)
            return s.current
        }
    }

    /// One frame reaches the tee: the region it gets (a change set since the last frame starts here).
    /// - Returns: its stamp, and whether a change (or a new frame size) took effect on it.
    func stampNext() -> (Stamp, changed: Bool) {
        // The settings' values (a lock of their own) only when the viewfinder changed: its generation is atomic.
        let generation = settings.viewfinderGeneration
        let moved = seenGeneration.load(ordering: .relaxed) != generation
        if let steady, !moved { return (steady, false) }
        let change = moved ? settings.values : nil
        let (stamp, changed, settled) = state.withLock { s -> (Stamp, Bool, Bool) in
            var changed = false
            // The stream's size changed since the last frame (new caps): the region followed it.
            if let last = s.lastStamped, last != s.current.frame { changed = true }
            if let v = change, let frame = s.frame, v.viewfinderGeneration != s.generation {
                s.generation = v.viewfinderGeneration
                seenGeneration.store(s.generation, ordering: .relaxed)
                s.viewfinder = v.viewfinder
                let target = v.viewfinder.region(in: frame)
                if v.viewfinderAnimation > 1 {
                    let whole = PixelRect(x: 0, y: 0, width: frame.width, height: frame.height)
                    s.animation = (s.current.region ?? whole, target ?? whole, 0, v.viewfinderAnimation)
                } else {
                    s.animation = nil
                    s.current = Self.stamp(target, s.viewfinder, frame)
                }
                changed = true
            }
            if var a = s.animation, let frame = s.frame {
                a.step += 1
                let done = a.step >= a.steps
                let region = done ? s.viewfinder.region(in: frame) : a.from.interpolated(to: a.to, a.step, of: a.steps)
                s.current = Self.stamp(region, s.viewfinder, frame)
                s.animation = done ? nil : a
                // The region it settles at is reported too: a `viewfinder` event at the animation's first frame
                // and at its last.
                if done { changed = true }
            }
            s.lastStamped = s.current.frame
            return (s.current, changed, s.animation == nil && s.frame != nil)
        }
        steady = settled ? stamp : nil
        return (stamp, changed)
    }

    private static func stamp(_ region: PixelRect?, _ viewfinder: Viewfinder, _ frame: Size) -> Stamp {
        Stamp(frame: frame, region: region, secondary: region.flatMap { viewfinder.secondaryRegion(inside: $0) })
    }
}

extension BarscopeError {
    static func noRegion(_ frame: Size, _ viewfinder: Viewfinder) -> BarscopeError {
        .badValue(
            "viewfinder: no region fits in a \(frame.width)x\(frame.height) frame with these insets "
                + "(\(viewfinder.minimumInset.description))")
    }
}

extension PixelRect {
    /// Step `step` of `steps` from this rectangle to `other`, eased (slow start and end), corners on even pixels
    /// as the crop of 4:2:0 video needs.
    public func interpolated(to other: PixelRect, _ step: Int, of steps: Int) -> PixelRect {
        let t0 = Double(step) / Double(max(1, steps))
        let t = t0 * t0 * (3 - 2 * t0)
        func mix(_ a: Int, _ b: Int) -> Int { Int((Double(a) + (Double(b) - Double(a)) * t) / 2) * 2 }
        let x0 = mix(x, other.x)
        let y0 = mix(y, other.y)
        let x1 = mix(maxX, other.maxX)
        let y1 = mix(maxY, other.maxY)
        return PixelRect(x: x0, y: y0, width: max(2, x1 - x0), height: max(2, y1 - y0))
    }
}

/// The stamp travels with its frame's buffer (`bs_buffer_set_region`): the crop and the scanner read it there, with
/// no lookup and no lock. The secondary rectangle stays in the ledger (only the overlay draws it).
extension RegionTimeline.Stamp {
    /// No region (the whole frame): a value no packed region has (its x would be 65535), and not
    /// `GST_CLOCK_TIME_NONE`, which the meta refuses as a timestamp.
    static let noRegion: UInt64 = .max - 1

    func attach(to buffer: UnsafeMutablePointer<GstBuffer>) {
        // (Every frame passes here: shifts, no array.)
        func field(_ v: Int, _ shift: UInt64) -> UInt64 { UInt64(UInt16(clamping: v)) << shift }
        let region = self.region.map { r in field(r.x, 48) | field(r.y, 32) | field(r.width, 16) | field(r.height, 0) }
        let frame = self.frame.map { UInt64(UInt32(clamping: $0.width)) << 32 | UInt64(UInt32(clamping: $0.height)) }
        bs_buffer_set_region(buffer, guint64(region ?? Self.noRegion), guint64(frame ?? .max))
    }

    /// The stamp a buffer carries (its secondary rectangle left out); nil when it carries none.
    init?(buffer: UnsafeMutablePointer<GstBuffer>) {
        var packedRegion: guint64 = 0
        var packedFrame: guint64 = 0
        guard bs_buffer_region(buffer, &packedRegion, &packedFrame) != 0 else { return nil }
        let region = UInt64(packedRegion)
        let frame = UInt64(packedFrame)
        self.init()
        if frame != .max { self.frame = Size(width: Int(frame >> 32), height: Int(frame & 0xFFFF_FFFF)) }
        if region != Self.noRegion {
            func field(_ shift: UInt64) -> Int { Int((region >> shift) & 0xFFFF) }
            self.region = PixelRect(x: field(48), y: field(32), width: field(16), height: field(0))
        }
    }
}
