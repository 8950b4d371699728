/// A point in full-frame pixel coordinates (x right, y down), as ZBar and cairo use them.
public struct Point: Hashable, Sendable, Codable {
    public var x: Double
    public var y: Double
    public init(_ x: Double, _ y: Double) {
        self.x = x
        self.y = y
    }
    public static func + (a: Point, b: Point) -> Point { Point(a.x + b.x, a.y + b.y) }
    public static func - (a: Point, b: Point) -> Point { Point(a.x - b.x, a.y - b.y) }
    /// The dot product, with the point taken as a vector.
    public func dot(_ p: Point) -> Double { x * p.x + y * p.y }
    public func distance(to p: Point) -> Double { ((x - p.x) * (x - p.x) + (y - p.y) * (y - p.y)).squareRoot() }
    /// Whether the point lies inside the polygon (even-odd rule).
    public func lies(inside polygon: [Point]) -> Bool {
        var inside = false
        var j = polygon.count - 1
        for i in polygon.indices {
            let (a, b) = (polygon[i], polygon[j])
            if (a.y > y) != (b.y > y), x < (b.x - a.x) * (y - a.y) / (b.y - a.y) + a.x { inside.toggle() }
            j = i
        }
        return inside
    }
    /// The point halfway to `p`.
    public func halfway(to p: Point) -> Point { Point((x + p.x) / 2, (y + p.y) / 2) }
}

/// A frame size in pixels.
public struct Size: Hashable, Sendable {
    public var width: Int
    public var height: Int
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
    /// Parses "1280x720".
    public init?(parsing text: String) {
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else { return nil }
        self.init(width: w, height: h)
    }
}

/// An integer pixel rectangle: what `videocrop` cuts, what the overlay outlines, what maps crop to frame.
public struct PixelRect: Hashable, Sendable {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
    public var maxX: Int { x + width }
    public var maxY: Int { y + height }
    public var isEmpty: Bool { width <= 0 || height <= 0 }
    /// The length of its diagonal: a code's size, for how far it may be from where it was.
    public var diagonal: Double { Double(width * width + height * height).squareRoot() }
    public func contains(_ p: Point) -> Bool {
        p.x >= Double(x) && p.y >= Double(y) && p.x <= Double(maxX) && p.y <= Double(maxY)
    }
    /// True when every point lies inside the rectangle.
    public func contains(all points: [Point]) -> Bool { points.allSatisfy(contains) }
}

/// A code's axis-aligned box, as events give it in `bounds`.
public typealias Bounds = PixelRect

extension PixelRect {
    /// The smallest integer box that holds every point (empty at the origin for no points).
    public init(enclosing points: [Point]) {
        guard let first = points.first else {
            self.init(x: 0, y: 0, width: 0, height: 0)
            return
        }
        var minX = first.x
        var maxX = first.x
        var minY = first.y
        var maxY = first.y
        for p in points {
            minX = min(minX, p.x)
            maxX = max(maxX, p.x)
            minY = min(minY, p.y)
            maxY = max(maxY, p.y)
        }
        let x0 = Int(minX.rounded(.down))
        let y0 = Int(minY.rounded(.down))
        self.init(x: x0, y: y0, width: Int(maxX.rounded(.up)) - x0, height: Int(maxY.rounded(.up)) - y0)
    }

    public var center: Point { Point(Double(x) + Double(width) / 2, Double(y) + Double(height) / 2) }

    /// The box grown by `margin` pixels on every side.
    public func expanded(by margin: Int) -> PixelRect {
        PixelRect(x: x - margin, y: y - margin, width: width + 2 * margin, height: height + 2 * margin)
    }

    /// True when the two boxes share any area.
    public func intersects(_ other: PixelRect) -> Bool {
        x < other.maxX && other.x < maxX && y < other.maxY && other.y < maxY
    }
    /// The smallest rectangle holding both.
    /// The part inside `bounds`, nil if none.
    public func clipped(to bounds: PixelRect) -> PixelRect? {
        let x0 = max(x, bounds.x)
        let y0 = max(y, bounds.y)
        let x1 = min(maxX, bounds.maxX)
        let y1 = min(maxY, bounds.maxY)
        return x1 > x0 && y1 > y0 ? PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0) : nil
    }

    public func union(_ other: PixelRect) -> PixelRect {
        let x0 = min(x, other.x)
        let y0 = min(y, other.y)
        return PixelRect(x: x0, y: y0, width: max(maxX, other.maxX) - x0, height: max(maxY, other.maxY) - y0)
    }
}
