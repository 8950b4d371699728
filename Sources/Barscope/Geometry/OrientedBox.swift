/// The tightest rectangle (any orientation) around a set of points.
///
/// ZBar gives a 1D code's location as the scan-line points where it was decoded, not corners; this box turns them
/// into the four corners the overlay and the events use.
public enum OrientedBox {
    /// Corners of the minimum-area enclosing rectangle, clockwise in image coordinates starting nearest the
    /// top-left, or the input when it has fewer than three distinct points.
    public static func corners(of points: [Point]) -> [Point] {
        let hull = convexHull(points)
        guard hull.count >= 3 else { return hull }
        var best: (area: Double, corners: [Point])? = nil
        for i in 0..<hull.count {
            let a = hull[i]
            let b = hull[(i + 1) % hull.count]
            let len = a.distance(to: b)
            guard len > 0 else { continue }
            let ux = (b.x - a.x) / len
            let uy = (b.y - a.y) / len  // edge direction
            let vx = -uy
            let vy = ux  // its normal
            var minU = Double.infinity
            var maxU = -Double.infinity
            var minV = Double.infinity
            var maxV = -Double.infinity
            for p in hull {
                let u = p.x * ux + p.y * uy
                let v = p.x * vx + p.y * vy
                minU = min(minU, u)
                maxU = max(maxU, u)
                minV = min(minV, v)
                maxV = max(maxV, v)
            }
            let area = (maxU - minU) * (maxV - minV)
            if best == nil || area < best!.area - 1e-9 {
                func at(_ u: Double, _ v: Double) -> Point { Point(u * ux + v * vx, u * uy + v * vy) }
                best = (area, [at(minU, minV), at(maxU, minV), at(maxU, maxV), at(minU, maxV)])
            }
        }
        return normalizedOrder(best?.corners ?? hull)
    }

    /// Andrew's monotone chain; returns the hull counter-clockwise in a y-up sense without repeated points.
    public static func convexHull(_ points: [Point]) -> [Point] {
        let sorted = Array(Set(points)).sorted { $0.x != $1.x ? $0.x < $1.x : $0.y < $1.y }
        guard sorted.count >= 3 else { return sorted }
        func cross(_ o: Point, _ a: Point, _ b: Point) -> Double {
            (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x)
        }
        var lower: [Point] = []
        for p in sorted {
            while lower.count >= 2 && cross(lower[lower.count - 2], lower[lower.count - 1], p) <= 0 {
                lower.removeLast()
            }
            lower.append(p)
        }
        var upper: [Point] = []
        for p in sorted.reversed() {
            while upper.count >= 2 && cross(upper[upper.count - 2], upper[upper.count - 1], p) <= 0 {
                upper.removeLast()
            }
            upper.append(p)
        }
        return Array(lower.dropLast() + upper.dropLast())
    }

    /// Orders four corners as top-left, bottom-left, bottom-right, top-right (the order DESIGN.md's events use).
    static func normalizedOrder(_ corners: [Point]) -> [Point] {
        guard corners.count == 4 else { return corners }
        let cx = corners.map(\.x).reduce(0, +) / 4
        let cy = corners.map(\.y).reduce(0, +) / 4
        // Sort by angle around the centre: in image coordinates (y down) increasing atan2 runs clockwise on screen.
        let byAngle = corners.sorted { atan2($0.y - cy, $0.x - cx) < atan2($1.y - cy, $1.x - cx) }
        // Start from the corner nearest the top-left, then go counter-clockwise on screen (TL, BL, BR, TR).
        let start = byAngle.indices.min { byAngle[$0].x + byAngle[$0].y < byAngle[$1].x + byAngle[$1].y }!
        let clockwise = (0..<4).map { byAngle[(start + $0) % 4] }
        return [clockwise[0], clockwise[3], clockwise[2], clockwise[1]]
    }
}

#if canImport(Glibc)
    import Glibc
#endif
