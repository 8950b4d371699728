import Foundation

/// A second decoder's opinion of ZBar's 1D reads: zxing-cpp confirms a one-line read at once, and checks every EAN
/// and UPC read, whose disputes go to the tracker's votes (`TextVotes`).
extension BarcodeReader {
    /// A 1D read one scan line made (ZBar's quality 1: nothing else agreed with it) is read again by zxing-cpp on its
    /// own region, at its size and at twice it: the same text from a second decoder is the margin that lets the
    /// tracker report it at once (`engine` "both"), rather than wait for a second frame to read it too. An EAN or
    /// UPC read of any quality is read again at its size too (`disputes`): ZBar, which tells the digits 1, 2, 7
    /// and 8 apart by its bars' widths alone, misreads a print whose bars ink spread or blur widened on every
    /// line alike, with a valid check digit, so the number of its lines that agree is no margin there; zxing-cpp
    /// matches each digit's whole pattern. Where it reads another text of that code in the same place, the two
    /// decoders dispute it. One frame does not settle which misread (on small, blurred codes zxing-cpp mistakes
    /// the same digits: seen at 1.3 px a module), so the read stays, and is handed over as disputed
    /// (`takeDisputes`) for the tracker to weigh the frames' votes (`TextVotes`).
    func secondOpinions(_ reads: [Detection], in image: LumaImage) -> [Detection] {
        reads.map { d in
            guard d.engine == "zbar", !ZBarScanner.isTwoDimensional(name: d.type) else { return d }
            let retail = Self.retail.contains(d.type)
            guard d.quality < 2 || retail else { return d }
            let margin = max(d.bounds.width, d.bounds.height) / 4 + 8
            let region = image.cropped(to: d.bounds.expanded(by: margin))
            func agrees(_ reads: [Detection]) -> Bool { reads.contains { $0.type == d.type && $0.data == d.data } }
            var confirmed = d
            confirmed.engine = "both"
            if retail {
                let here = retailReads(around: d, in: image)
                if agrees(here) { return confirmed }
                // A dispute read at half size is read again at full size, whose agreement settles it: halving a
                // blurred print merges what ZBar, reading every pixel, told apart (seen: an EAN-13 of 3.9-px modules
                // in motion, read right on 154 lines and disputed in every frame).
                if here.contains(where: { Self.contradicts($0, d) }), Self.halvesForCheck(d),
                    agrees(retailReads(around: d, in: image, halved: false))
                {
                    return confirmed
                }
                if here.contains(where: { Self.contradicts($0, d) }) {
                    disputes.append(d)
                    return d
                }
            } else if let region, agrees(zxing.read(region)) {
                return confirmed
            }
            guard d.quality < 2, let region, TransformedLuma.scaled(region, by: 2).withImage({ agrees(zxing.read($0)) })
            else { return d }
            return confirmed
        }
    }

    /// zxing-cpp's EAN and UPC reads (trying hard: many more rows, both ways) of a band through the middle of read `d`:
    /// its middle half across the scan, grown along it by a quarter of its length and 8 px for the quiet zones. A
    /// misread made alike on every line is made on these lines too, and the band costs a half of the rows of the
    /// whole region grown both ways (tracked mode reads every frame's codes again: docs/decisions.md has the cost).
    /// Points in `image`'s pixels.
    func retailReads(around d: Detection, in image: LumaImage, halved: Bool = true) -> [Detection] {
        let b = d.bounds
        let margin = max(b.width, b.height) / 4 + 8
        let across = d.acrossBars ?? Point(b.width >= b.height ? 1 : 0, b.width >= b.height ? 0 : 1)
        let band =
            abs(across.x) >= abs(across.y)
            ? PixelRect(
                x: b.x - margin, y: b.y + b.height / 4, width: b.width + 2 * margin, height: max(8, b.height / 2))
            : PixelRect(
                x: b.x + b.width / 4, y: b.y - margin, width: max(8, b.width / 2), height: b.height + 2 * margin)
        guard let region = image.cropped(to: band) else { return [] }
        let offset = Point(Double(max(0, band.x)), Double(max(0, band.y)))
        guard halved, Self.halvesForCheck(d) else {
            return retailCheck.read(region, mapping: CropMapping(offsetX: Int(offset.x), offsetY: Int(offset.y)))
        }
        // (Halved into a buffer this reader keeps, as `readHalved` does: no allocation per read.)
        let (w, h) = (region.width / 2, region.height / 2)
        guard w >= 8, h >= 8 else { return [] }
        if checkBuffer.count < w * h { checkBuffer = [UInt8](repeating: 0, count: w * h) }
        let reads = checkBuffer.withUnsafeMutableBufferPointer { out -> [Detection] in
            region.halve(into: out.baseAddress!)
            return retailCheck.read(LumaImage(base: UnsafeRawPointer(out.baseAddress!), width: w, height: h, stride: w))
        }
        return reads.map { r in
            var placed = r
            // (`LumaImage.halve` averages each 2x2 block: a half-size pixel's centre is 2x + 0.5 at full size.)
            placed.polygon = r.polygon.map { Point($0.x * 2 + 0.5 + offset.x, $0.y * 2 + 0.5 + offset.y) }
            placed.bounds = Bounds(enclosing: placed.polygon)
            return placed
        }
    }

    /// Whether read `d`'s check reads it at half size: modules of 4 px or more (2 px a module is plenty for a code
    /// read whole), a quarter of the pixels. The module from the outline's longest side, not its bounds (which a
    /// tilt lengthens).
    static func halvesForCheck(_ d: Detection) -> Bool {
        let length =
            d.polygon.count >= 2
            ? Plausibility.length(of: d.polygon) : max(Double(d.bounds.width), Double(d.bounds.height))
        let modules = Double(Plausibility.minimumModules(type: d.type, data: d.data) ?? 95)
        return length / modules >= 4
    }

    /// The reads disputed since the last call, in image pixels as read (full-frame for `read`'s).
    public func takeDisputes() -> [Detection] {
        defer { disputes = [] }
        return disputes
    }

    /// The number of disputes kept, after dropping all but the latest few when no caller takes them (stills).
    func keepingFewDisputes() -> Int {
        if disputes.count > 64 { disputes.removeFirst(disputes.count - 16) }
        return disputes.count
    }

    /// Moves the disputes found since `start` from the pixels of the image read to the caller's.
    func placeDisputes(from start: Int, _ place: (Point) -> Point) {
        for i in min(start, disputes.count)..<disputes.count {
            disputes[i].polygon = disputes[i].polygon.map(place)
            disputes[i].bounds = Bounds(enclosing: disputes[i].polygon)
        }
    }

    /// EAN and UPC: a mod-10 check digit, which a misread digit pair passes one time in ten.
    static let retail: Set<String> = ["EAN-13", "UPC-A", "EAN-8", "UPC-E", "ISBN-13", "ISBN-10"]

    /// Whether `other` (zxing-cpp's read) is another text of `mine`'s code: the same symbology, its middle on
    /// `mine`'s bars (inside its outline, or within a quarter of its diagonal of its middle where the outline is
    /// thin). Not a code beside it, stacked or side by side, whose region overlaps: two real codes, not a dispute.
    static func contradicts(_ other: Detection, _ mine: Detection) -> Bool {
        guard other.type == mine.type, other.data != mine.data else { return false }
        let c = other.center
        return c.distance(to: mine.center) <= mine.bounds.diagonal / 4 || c.lies(inside: mine.polygon)
    }
}
