import Foundation

extension BarcodeReader {
    /// This frame's reads `found`, and the known codes (`KnownCodes`: read in the frames just before) they lack,
    /// looked for again by ZBar where they were (the code's region grown by an eighth of its length and 24 px for
    /// the motion since): on the region turned so that the code lies along ZBar's rows (ZBar reads a code tilted
    /// 30 to 60 degrees badly), then on that turned region binarized against its local mean (glare and blur that
    /// flatten the bars' contrast). Only the known text of the known symbology counts: a second look confirms a
    /// code, it never reads a new one, so it adds no misread. An I2/5, CODE-39 or Codabar inside a longer read of
    /// its symbology, by either look, is a part of that code and is dropped (seen: a part of a tilted I2/5 read in a
    /// few frames, then confirmed in more).
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
            let region = area.expanded(by: max(area.width, area.height) / 8 + 24)
            guard let crop = image.cropped(to: region) else { return nil }
            let origin = Point(Double(max(0, region.x)), Double(max(0, region.y)))
            let isKnown = { (d: Detection) in d.type == k.type && d.data == k.data }
            var read: Detection? = nil
            let turned = TransformedLuma.rotated(crop, degrees: -Self.longestSideAngle(of: local))
            // Turned, a 1D code's bars cross ZBar's rows: its columns, and the QR stage, cannot read it.
            let linear = !ZBarScanner.isTwoDimensional(name: k.type)
            zbarScanner.scanning(linear ? .linear : .matrix, rows: 1, columns: linear ? 0 : 1) {
                turned.withImage { image in
                    let window = max(15, min(image.width, image.height) / 8)
                    read =
                        ZBarScanner.withoutParts(zbarScanner.scan(image)).first(where: isKnown)
                        ?? TransformedLuma.binarized(image, window: window).withImage {
                            ZBarScanner.withoutParts(zbarScanner.scan($0)).first(where: isKnown)
                        }
                }
            }
            guard var d = read else { return nil }
            d.polygon = d.polygon.map { turned.toSource($0) }.map { Point($0.x + origin.x, $0.y + origin.y) }
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
}
