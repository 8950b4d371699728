import Foundation

extension BarcodeReader {
    /// This frame's reads `found`, and the known codes (`KnownCodes`: read in the frames just before) they lack,
    /// looked for again where they were, on the code's region grown by half its size for the motion since: ZBar on
    /// the region turned so that the code lies along its rows (ZBar reads a code tilted 30 to 60 degrees badly),
    /// then on that turned region binarized against its local mean (glare and blur that flatten the bars'
    /// contrast), then zxing-cpp with its own rotations and inversions on the region as it is. On the real-photo
    /// clips' frames ZBar missed next to frames it read, these read about half. Only the known text of the known
    /// symbology counts: a second look confirms a code, it never reads a new one, so it adds no misread. An I2/5,
    /// CODE-39 or Codabar inside a longer read of its symbology, by either look, is a part of that code and is
    /// dropped (seen: a part of a tilted I2/5 read in a few frames, then confirmed in more).
    /// - Parameters:
    ///   - known: in full-frame pixels; `mapping` takes this image's pixels to the frame's.
    ///   - viewfinder: the crop, if any (reads are judged as `read` judges them).
    func withKnownCodes(
        _ known: [KnownCodes.Code], missingFrom found: [Detection], in image: LumaImage, mapping: CropMapping,
        viewfinder: PixelRect?
    ) -> [Detection] {
        let missing = known.filter { k in !found.contains { $0.type == k.type && $0.data == k.data } }
        let again = missing.compactMap { k -> Detection? in
            let local = k.polygon.map { Point($0.x - Double(mapping.offsetX), $0.y - Double(mapping.offsetY)) }
            let area = Bounds(enclosing: local)
            let region = area.expanded(by: max(area.width, area.height) / 2 + 8)
            guard let crop = image.cropped(to: region) else { return nil }
            let origin = Point(Double(max(0, region.x)), Double(max(0, region.y)))
            let isKnown = { (d: Detection) in d.type == k.type && d.data == k.data }
            var read: Detection? = nil
            let turned = TransformedLuma.rotated(crop, degrees: -Self.longestSideAngle(of: local))
            turned.withImage { image in
                let window = max(15, min(image.width, image.height) / 8)
                read =
                    ZBarScanner.withoutParts(zbarScanner.scan(image)).first(where: isKnown)
                    ?? TransformedLuma.binarized(image, window: window).withImage {
                        ZBarScanner.withoutParts(zbarScanner.scan($0)).first(where: isKnown)
                    }
            }
            if var d = read {
                d.polygon = d.polygon.map { turned.toSource($0) }
                read = d
            } else if var d = ZBarScanner.withoutParts(zxingHarder.read(crop)).first(where: isKnown) {
                if !ZBarScanner.isTwoDimensional(name: d.type) { d.polygon = Self.barsBox(around: d.polygon, in: crop) }
                d.engine = "zxing"
                read = d
            }
            guard var d = read else { return nil }
            d.polygon = d.polygon.map { Point($0.x + origin.x, $0.y + origin.y) }
            d.bounds = Bounds(enclosing: d.polygon)
            guard Plausibility.accepts(d, in: image, cropped: viewfinder != nil) else { return nil }
            d.polygon = d.polygon.map(mapping.toFrame)
            d.bounds = Bounds(enclosing: d.polygon)
            d.inViewfinder = viewfinder.map { $0.contains(all: d.polygon) } ?? true
            return d
        }
        // A part of a code this frame read whole, by either look, is no code of its own.
        return again.isEmpty ? found : ZBarScanner.withoutParts(found + again)
    }

    /// The angle (degrees, image axes) of a polygon's longest side: a 1D code's bars follow one another along it.
    static func longestSideAngle(of polygon: [Point]) -> Double {
        var best = (length: 0.0, angle: 0.0)
        for (i, a) in polygon.enumerated() {
            let b = polygon[(i + 1) % polygon.count]
            let length = a.distance(to: b)
            if length > best.length { best = (length, atan2(b.y - a.y, b.x - a.x) * 180 / .pi) }
        }
        return best.angle
    }

    /// A 1D read's outline from zxing-cpp's scan lines (its first line from the first corner to the last, its last
    /// between the middle two): the lines' ends boxed across the image's own bar direction and snapped to the bars,
    /// as ZBar's hits are; clipped to the image.
    static func barsBox(around lines: [Point], in image: LumaImage) -> [Point] {
        guard lines.count == 4 else { return lines }
        let (a, b) = (lines[0], lines[3])
        let length = a.distance(to: b)
        guard length >= 1 else { return lines }
        let along = Point((b.x - a.x) / length, (b.y - a.y) / length)
        let across = BarEdgeRefiner.acrossBars(in: image, around: Bounds(enclosing: lines)) ?? along
        let r = BarEdgeRefiner.refine(BarEdgeRefiner.box(of: lines, across: across), in: image, across: across)
        let (w, h) = (Double(image.width), Double(image.height))
        return r.corners.map { Point(min(max($0.x, 0), w), min(max($0.y, 0), h)) }
    }
}
