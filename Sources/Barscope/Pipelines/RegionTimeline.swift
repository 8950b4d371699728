/// The viewfinder region of every frame, decided once where the stream splits (the tee), so that the crop, the
/// scanner's mapping back to full-frame pixels and the overlay use the same rectangle for the same frame, also
/// while the viewfinder changes during play (at once, or moving smoothly over a few frames).
///
/// Sendable: all state is behind one lock.
final class RegionTimeline: Sendable {
    /// What one frame was given: its size, its region (nil = the whole frame) and the dashed secondary region
    /// inside it.
    struct Stamp: Equatable, Sendable {
        var frame: Size? = nil
        var region: PixelRect? = nil
        var secondary: PixelRect? = nil
    }

    private struct State {
        var frame: Size? = nil
        var viewfinder: Viewfinder
        var current = Stamp()
        /// A change asked for, applied to the next frame that reaches the tee.
        var pending: (viewfinder: Viewfinder, frames: Int)? = nil
        var animation: (from: PixelRect, to: PixelRect, step: Int, steps: Int)? = nil
        /// The stamps of recent frames by pts (the scanner and the overlay ask later, in their own threads).
        var byPTS: [UInt64: Stamp] = [:]
        var order: [UInt64] = []
        /// Frame numbers at which a requested change was applied, for the `viewfinder` event.
        var applied: [(frame: Int, stamp: Stamp)] = []
        /// The size of the last frame stamped.
        var lastStamped: Size? = nil
    }

    private let state: Locked<State>
    /// How many stamps are kept: far more than any queue between the tee and the scanner or overlay holds.
    private static let memory = 1024

    init(viewfinder: Viewfinder) { state = Locked(State(viewfinder: viewfinder)) }

    var viewfinder: Viewfinder { state.withLock { $0.viewfinder } }
    var frame: Size? { state.withLock { $0.frame } }
    var current: Stamp { state.withLock { $0.current } }

    /// A new viewfinder, from the next frame on; over `animationFrames` frames the region moves there smoothly.
    /// - Throws: ``BarscopeError/badValue`` when it has no region in the current frame size.
    func request(_ viewfinder: Viewfinder, animationFrames: Int) throws {
        try state.withLock { s in
            if let frame = s.frame, viewfinder.enabled, viewfinder.region(in: frame) == nil {
                throw BarscopeError.badValue(
                    "viewfinder: no region fits in a \(frame.width)x\(frame.height) frame with these insets "
                        + "(\(viewfinder.minimumInset.description))")
            }
            s.pending = (viewfinder, max(0, animationFrames))
        }
    }

    /// The stream's size is known or has changed (caps): the region follows it at once.
    /// - Returns: the new stamp, or nil when the viewfinder has no region in a frame of this size.
    func setFrame(_ size: Size) -> Stamp? {
        state.withLock { s in
            s.frame = size
            s.animation = nil
            if let p = s.pending {
                s.viewfinder = p.viewfinder
                s.pending = nil
            }
            let region = s.viewfinder.region(in: size)
            if s.viewfinder.enabled && region == nil { return nil }
            s.current = Self.stamp(region, s.viewfinder, size)
            return s.current
        }
    }

    /// One frame reaches the tee: the region it gets (a pending change starts here).
    /// - Returns: its stamp, and whether a requested change was applied on it.
    func stamp(frameNumber: Int, pts: UInt64?) -> (Stamp, changed: Bool) {
        state.withLock { s in
            var changed = false
            // The stream's size changed since the last frame (new caps): the region followed it.
            if let last = s.lastStamped, last != s.current.frame { changed = true }
            if let p = s.pending, let frame = s.frame {
                s.pending = nil
                s.viewfinder = p.viewfinder
                let target = p.viewfinder.region(in: frame)
                if p.frames > 1 {
                    let whole = PixelRect(x: 0, y: 0, width: frame.width, height: frame.height)
                    s.animation = (s.current.region ?? whole, target ?? whole, 0, p.frames)
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
            }
            if changed { s.applied.append((frameNumber, s.current)) }
            s.lastStamped = s.current.frame
            if let pts {
                if s.byPTS.updateValue(s.current, forKey: pts) == nil { s.order.append(pts) }
                if s.order.count > Self.memory {
                    let old = s.order.prefix(s.order.count - Self.memory)
                    for p in old { s.byPTS.removeValue(forKey: p) }
                    s.order.removeFirst(old.count)
                }
            }
            return (s.current, changed)
        }
    }

    /// The stamp a frame got at the tee (the current one for frames without a pts or stamped too long ago).
    func stamp(forPTS pts: UInt64?) -> Stamp {
        state.withLock { s in pts.flatMap { s.byPTS[$0] } ?? s.current }
    }

    /// Changes applied since the last call, for events.
    func takeApplied() -> [(frame: Int, stamp: Stamp)] {
        state.withLock { s in
            defer { s.applied.removeAll() }
            return s.applied
        }
    }

    private static func stamp(_ region: PixelRect?, _ viewfinder: Viewfinder, _ frame: Size) -> Stamp {
        Stamp(frame: frame, region: region, secondary: region.flatMap { viewfinder.secondaryRegion(inside: $0) })
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
