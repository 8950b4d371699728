import Foundation

extension BarcodeReader {
    /// This frame's reads `found`, and the known codes (`KnownCodes`: read in the frames just before) they lack,
    /// looked for again where they were (the code's region grown by an eighth of its length and 24 px for the
    /// motion since): by ZBar on the region turned so that the code lies along ZBar's rows (ZBar reads a code tilted
    /// 30 to 60 degrees badly), then on that turned region binarized against its local mean (glare and blur that
    /// flatten the bars' contrast), both again on the region at half size, then by zxing-cpp on the turned region
    /// (`knownByZXing`: shading and blur ZBar's QR stage gives up on). Only the known text of the known symbology
    /// counts: a second look confirms a code, it never reads a new one, so it adds no misread. An I2/5, CODE-39 or
    /// Codabar inside a longer read of its symbology, by either look, is a part of that code and is dropped (seen: a
    /// part of a tilted I2/5 read in a few frames, then confirmed in more).
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
            let turned = TransformedLuma.rotated(crop, degrees: -Self.longestSideAngle(of: local))
            // A read in the turned region, turned back into the crop's pixels.
            func turnedBack(_ read: Detection) -> Detection {
                var d = read
                d.polygon = d.polygon.map(turned.toSource)
                if let u = d.acrossBars {
                    let (a, b) = (turned.toSource(Point(0, 0)), turned.toSource(u))
                    let length = a.distance(to: b)
                    d.acrossBars = length > 0 ? Point((b.x - a.x) / length, (b.y - a.y) / length) : nil
                }
                return d
            }
            func known(_ image: LumaImage) -> Detection? {
                ZBarScanner.withoutParts(zbarScanner.scan(image)).first(where: isKnown)
                    ?? TransformedLuma.binarized(image).withImage {
                        ZBarScanner.withoutParts(zbarScanner.scan($0)).first(where: isKnown)
                    }
            }
            // Turned, a 1D code's bars cross ZBar's rows: its columns, and the QR stage, cannot read it.
            let linear = !ZBarScanner.isTwoDimensional(name: k.type)
            func byZBar() -> Detection? {
                zbarScanner.scanning(linear ? .linear : .matrix, rows: 1, columns: linear ? 0 : 1) {
                    turned.withImage(known).map(turnedBack)
                }
            }
            // At half size, not turned (rows and columns), as a frame where nothing is read is read
            // (`emptyImageReads`: a print enlarged past its sharpness has edges too soft for ZBar at full size, and
            // turning it softens them more). An EAN or UPC read there counts only where zxing-cpp reads it there too
            // (ZBar misreads some prints at half size with a valid check digit, and a misread's track would be kept
            // alive by it).
            func halved() -> Detection? {
                let half = TransformedLuma.scaled(crop, by: 0.5)
                return zbarScanner.scanning(linear ? .linear : .matrix, rows: 1, columns: 1) {
                    half.withImage { h -> Detection? in
                        guard var d = known(h) else { return nil }
                        if Self.retail.contains(d.type), !zxing.read(h).contains(where: isKnown) { return nil }
                        d.polygon = d.polygon.map(half.toSource)
                        d.lengthAcrossBars = d.lengthAcrossBars.map { $0 * Double(crop.width) / Double(half.width) }
                        return d
                    }
                }
            }
            func byZXing() -> Detection? {
                turned.withImage { knownByZXing(in: $0, linear: linear, isKnown: isKnown) }.map(turnedBack)
            }
            // The first look whose read is plausible where it was found, in the frame's pixels.
            for look in [byZBar, halved, byZXing] {
                guard var d = look() else { continue }
                d.polygon = d.polygon.map { Point($0.x + origin.x, $0.y + origin.y) }
                if linear, d.engine == "zxing", let u = d.acrossBars {
                    d.polygon = Self.outline(of: d.polygon, across: u, known: local)
                }
                d.bounds = Bounds(enclosing: d.polygon)
                guard Plausibility.accepts(d, in: image, cropped: viewfinder != nil) else { continue }
                d.polygon = d.polygon.map(mapping.toFrame)
                d.bounds = Bounds(enclosing: d.polygon)
                d.inViewfinder = viewfinder.map { $0.contains(all: d.polygon) } ?? true
                return d
            }
            return nil
        }
        // A part of a code this frame read whole, by either look, is no code of its own.
        return again.isEmpty ? found : ZBarScanner.withoutParts(found + again)
    }

    /// The third look at a known code, where ZBar's two failed: zxing-cpp on the turned region (its decoders keep
    /// reading where blur has merged a module's edges, as on stills). Only the known text counts, as for ZBar. A 1D
    /// read's polygon is zxing-cpp's scan lines, so its outline is fitted to the bars as ZBar's reads' are, across
    /// the turned region's rows.
    private func knownByZXing(in image: LumaImage, linear: Bool, isKnown: (Detection) -> Bool) -> Detection? {
        guard var d = zxing.read(image).first(where: isKnown) else { return nil }
        guard linear, d.polygon.count >= 2 else { return d }
        let modules = Plausibility.minimumModules(type: d.type, data: d.data)
        guard
            let outline = BarOutline.estimate(
                reads: BarcodeReader.scanLines(of: d.polygon), modules: modules, in: image)
        else { return d }
        d.polygon = outline.corners
        d.lengthAcrossBars = outline.length
        d.acrossBars = outline.across
        return d
    }

    /// A 1D read's outline where the image did not show its bars' ends along them (too faint to fit: the outline has
    /// no height, zxing-cpp's scan line alone): the known code's outline, moved across the bars (`u`) by as much as
    /// the read's middle lies from the known one's. The read says where the code is across its bars, the frames
    /// before say how far its bars reach along them.
    static func outline(of read: [Point], across u: Point, known: [Point]) -> [Point] {
        let v = Point(-u.y, u.x)
        let along = read.map { $0.x * v.x + $0.y * v.y }
        guard read.count >= 2, known.count == 4, (along.max() ?? 0) - (along.min() ?? 0) < 2 else { return read }
        func middle(_ p: [Point]) -> Point {
            Point(p.reduce(0) { $0 + $1.x } / Double(p.count), p.reduce(0) { $0 + $1.y } / Double(p.count))
        }
        let (a, b) = (middle(read), middle(known))
        let shift = (a.x - b.x) * u.x + (a.y - b.y) * u.y
        return known.map { Point($0.x + u.x * shift, $0.y + u.y * shift) }
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
