/// A width:height ratio, as Scanbot's `SBSDKAspectRatio`.
public struct AspectRatio: Hashable, Sendable, CustomStringConvertible {
    public var width: Double
    public var height: Double
    public init(_ width: Double, _ height: Double) {
        self.width = width
        self.height = height
    }
    /// Parses "4:3" (or "1.5"); nil unless both sides are finite and positive.
    public init?(parsing text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 2, let w = Double(parts[0]), let h = Double(parts[1]) {
            self.init(w, h)
        } else if parts.count == 1, let r = Double(parts[0]) {
            self.init(r, 1)
        } else {
            return nil
        }
        guard width.isFinite, height.isFinite, width > 0, height > 0 else { return nil }
    }
    public var value: Double { width / height }
    public var description: String { "\(Self.trim(width)):\(Self.trim(height))" }
    private static func trim(_ v: Double) -> String { v == v.rounded() ? String(Int(v)) : String(v) }
}

/// Distances from each edge, in frame pixels (Scanbot's `UIEdgeInsets`).
public struct EdgeInsets: Hashable, Sendable, CustomStringConvertible {
    public var description: String {
        func n(_ v: Double) -> String { v == v.rounded() ? String(Int(v)) : String(v) }
        return "top \(n(top)), left \(n(left)), bottom \(n(bottom)), right \(n(right))"
    }
    public var top: Double
    public var left: Double
    public var bottom: Double
    public var right: Double
    public init(top: Double, left: Double, bottom: Double, right: Double) {
        self.top = top
        self.left = left
        self.bottom = bottom
        self.right = right
    }
    public init(all v: Double) { self.init(top: v, left: v, bottom: v, right: v) }
}

/// Where the region of interest is, stated as Scanbot states it (aspect ratio and minimum insets) or, the
/// alternative, as MicroBlink's normalised `scanningRegion` (x, y, w, h in 0...1 of the frame).
///
/// The same computed ``PixelRect`` drives the `videocrop` rectangle, the overlay and the mapping of decoded
/// coordinates back to the full frame, so the three always agree.
public struct Viewfinder: Hashable, Sendable {
    public var enabled: Bool
    public var aspectRatio: AspectRatio
    public var minimumInset: EdgeInsets
    /// If positive, keep this height (and the aspect ratio) by growing the insets; ignored when it does not fit.
    public var preferredHeight: Double
    /// MicroBlink's normalised region; when set it replaces aspect ratio, insets and preferred height.
    public var normalizedRegion: NormalizedRegion?
    /// Scanbot's secondary view finder: a second region of this ratio inside the first, drawn dashed (a guide
    /// for the user; the crop stays the primary region). None when nil.
    public var secondaryAspectRatio: AspectRatio? = nil
    /// Its minimum distance from the primary region, each side (Scanbot's default: 10).
    public var secondaryMinimumInset = EdgeInsets(all: 10)

    public init(
        enabled: Bool = true, aspectRatio: AspectRatio = AspectRatio(4, 3),
        minimumInset: EdgeInsets = EdgeInsets(all: 20), preferredHeight: Double = -1,
        normalizedRegion: NormalizedRegion? = nil
    ) {
        self.enabled = enabled
        self.aspectRatio = aspectRatio
        self.minimumInset = minimumInset
        self.preferredHeight = preferredHeight
        self.normalizedRegion = normalizedRegion
    }

    public static let off = Viewfinder(enabled: false)

    /// The secondary region inside `primary`: the largest rectangle of its ratio inside the primary less the
    /// secondary insets, centred; nil when there is none or it does not fit.
    public func secondaryRegion(inside primary: PixelRect) -> PixelRect? {
        guard let ratio = secondaryAspectRatio else { return nil }
        let inner = Viewfinder(aspectRatio: ratio, minimumInset: secondaryMinimumInset)
        guard let r = inner.region(in: Size(width: primary.width, height: primary.height)) else { return nil }
        return PixelRect(x: primary.x + r.x, y: primary.y + r.y, width: r.width, height: r.height)
    }

    /// The region of interest in a frame of `size`, or nil when disabled or when nothing fits.
    ///
    /// The largest rectangle of the aspect ratio inside the frame less the insets, centred in that space; with a
    /// positive preferred height that fits, that height instead. Edges land on even pixels so that the crop of a
    /// 4:2:0 frame keeps its chroma aligned and crop, drawing and mapping use the very same numbers.
    public func region(in size: Size) -> PixelRect? {
        guard enabled else { return nil }
        let w = Double(size.width)
        let h = Double(size.height)
        if let n = normalizedRegion {
            return Self.evenRect(x: n.x * w, y: n.y * h, width: n.width * w, height: n.height * h, in: size)
        }
        let i = minimumInset
        let availW = w - i.left - i.right
        let availH = h - i.top - i.bottom
        guard availW >= 2, availH >= 2 else { return nil }
        let ratio = aspectRatio.value
        var rh = min(availH, availW / ratio)
        if preferredHeight > 0, preferredHeight <= availH, preferredHeight * ratio <= availW {
            rh = preferredHeight
        }
        let rw = rh * ratio
        let x = i.left + (availW - rw) / 2
        let y = i.top + (availH - rh) / 2
        return Self.evenRect(x: x, y: y, width: rw, height: rh, in: size)
    }

    /// Snaps a rectangle inward to even pixel edges, clamped to the frame.
    static func evenRect(x: Double, y: Double, width: Double, height: Double, in size: Size) -> PixelRect? {
        func up(_ v: Double) -> Int { Int((v / 2).rounded(.up)) * 2 }
        func down(_ v: Double) -> Int { Int((v / 2).rounded(.down)) * 2 }
        let x0 = max(0, up(x - 1e-9))
        let y0 = max(0, up(y - 1e-9))
        let x1 = min(size.width, down(x + width + 1e-9))
        let y1 = min(size.height, down(y + height + 1e-9))
        guard x1 - x0 >= 2, y1 - y0 >= 2 else { return nil }
        return PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }
}

/// MicroBlink's `scanningRegion`: origin and size as fractions of the frame, (0,0) top-left, (1,1) bottom-right.
public struct NormalizedRegion: Hashable, Sendable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double
    public init?(x: Double, y: Double, width: Double, height: Double) {
        guard [x, y, width, height].allSatisfy(\.isFinite), x >= 0, y >= 0, width > 0, height > 0,
            x + width <= 1 + 1e-9, y + height <= 1 + 1e-9
        else { return nil }
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
}

/// Maps points found in a cropped image back to full-frame pixels.
public struct CropMapping: Hashable, Sendable {
    public var offsetX: Int
    public var offsetY: Int
    public init(offsetX: Int = 0, offsetY: Int = 0) {
        self.offsetX = offsetX
        self.offsetY = offsetY
    }
    public init(region: PixelRect?) { self.init(offsetX: region?.x ?? 0, offsetY: region?.y ?? 0) }
    public func toFrame(_ p: Point) -> Point { Point(p.x + Double(offsetX), p.y + Double(offsetY)) }
}
