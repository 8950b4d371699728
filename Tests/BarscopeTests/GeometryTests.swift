import Barscope
import TestSupport
import Testing

@Suite(.suiteLimit) struct GeometryTests {
    @Test func orientedBoxOfAxisAlignedHits() {
        // Scan-line hits at both ends of a horizontal code: x 100 and 300, rows 50...80.
        var hits: [Point] = []
        for y in stride(from: 50.0, through: 80, by: 2) { hits += [Point(100, y), Point(300, y)] }
        let box = OrientedBox.corners(of: hits)
        #expect(box == [Point(100, 50), Point(100, 80), Point(300, 80), Point(300, 50)])
    }

    @Test func orientedBoxFollowsRotation() {
        // A 200×40 rectangle rotated 30°: its corners come back (in TL, BL, BR, TR order) within rounding.
        let a = Double.pi / 6
        func rot(_ x: Double, _ y: Double) -> Point {
            Point(x * cos(a) - y * sin(a) + 500, x * sin(a) + y * cos(a) + 300)
        }
        var pts: [Point] = []
        for t in stride(from: 0.0, through: 40, by: 4) { pts += [rot(0, t), rot(200, t)] }
        let box = OrientedBox.corners(of: pts)
        let truth = [rot(0, 0), rot(0, 40), rot(200, 40), rot(200, 0)]
        for t in truth { #expect(box.map { $0.distance(to: t) }.min()! < 0.01) }
        #expect(box[0].x + box[0].y == box.map { $0.x + $0.y }.min())
    }

    @Test func boundsEncloseThePolygon() {
        let b = Bounds(enclosing: [Point(10.5, 20), Point(30, 40.2)])
        #expect(b == Bounds(x: 10, y: 20, width: 20, height: 21))
    }

    @Test func colorsParse() {
        #expect(Color(hex: "#00FF0080") == Color(red: 0, green: 1, blue: 0, alpha: 128.0 / 255))
        #expect(Color(hex: "ffffff") == .white)
        #expect(Color(hex: "#12345") == nil)
        #expect(Color(hex: "#00FF0080")!.description == "#00FF0080")
    }
}

#if canImport(Glibc)
    import Glibc
#endif
