/// Reads that cannot be what they claim, whichever engine made them: checked before anything is reported.
enum Plausibility {
    /// False for a 1D read shorter than its symbology's fewest modules (a module is never narrower than a pixel:
    /// such a read is a phantom from text or texture), and, in a viewfinder crop, for a 1D read that runs into the
    /// crop's edge (a code cut by the crop can read as a shorter valid code: truncated I2/5).
    static func accepts(_ d: Detection, in image: LumaImage, cropped: Bool) -> Bool {
        guard !ZBarScanner.isTwoDimensional(name: d.type) else { return true }
        // No extent across the bars at all: hits piled on one line (a phantom, or a code cut by the crop).
        if let across = d.lengthAcrossBars, across < 1 { return false }
        // The longest side, not the length across the bars: under perspective the box's ends can fall short while
        // the read is right; a phantom is short every way.
        if let least = leastLength(type: d.type, data: d.data), length(of: d.polygon) < least { return false }
        if cropped {
            // Any side: the hits of a code that runs out of the crop pile up on the crop's edge.
            let whole = PixelRect(x: 0, y: 0, width: image.width, height: image.height)
            if d.runsOffImage || touches(d.bounds, edgeOf: whole) { return false }
        }
        return true
    }

    /// A 1D read that comes within a pixel of the crop's edge (full-frame pixels): a code cut by the viewfinder.
    static func cutByCrop(_ d: Detection, crop: PixelRect) -> Bool {
        guard !ZBarScanner.isTwoDimensional(name: d.type) else { return false }
        return touches(d.bounds, edgeOf: crop)
    }

    /// Within a pixel of any side of `rect`.
    static func touches(_ b: PixelRect, edgeOf rect: PixelRect) -> Bool {
        b.x <= rect.x + 1 || b.y <= rect.y + 1 || b.maxX >= rect.maxX - 1 || b.maxY >= rect.maxY - 1
    }

    /// The shortest a 1D symbol with this text can be in pixels: its fewest modules at a pixel each, times 0.9 (box
    /// ends are found to the pixel, and a code printed at one pixel a module loses half at each end); nil when not
    /// known.
    static func leastLength(type: String, data: String) -> Double? {
        minimumModules(type: type, data: data).map { 0.9 * Double($0) }
    }

    /// The fewest modules a 1D symbol with this text spans, quiet zones left out; nil when not known.
    static func minimumModules(type: String, data: String) -> Int? {
        let n = data.utf8.count
        switch type {
        // A UPC-E is reported in its EAN-13 form (ZBar's default): 51 modules then. Only a number UPC-E can write
        // may be one (a UPC-A of 1.4-px modules taken for a UPC-E had its bars judged 2.6 px wide, and its box
        // drawn square to the image across a tilted code).
        case "EAN-13": return couldBeUPCE(data) ? 51 : 95
        case "UPC-A", "ISBN-13", "ISBN-10": return 95
        case "EAN-8": return 67
        case "UPC-E": return 51
        case "EAN-2": return 20
        case "EAN-5": return 47
        // Start, check and stop characters around the data; code set C packs two digits in a character.
        case "CODE-128": return 11 * ((n + 1) / 2 + 2) + 13
        // A character is 3 wide and 6 narrow elements plus a gap: 12 modules at a wide-to-narrow ratio of 2.
        case "CODE-39": return 13 * (n + 2)
        case "CODE-93": return 9 * (n + 4) + 1
        // Each digit 2 wide and 3 narrow elements (7 modules at ratio 2), start 4, stop 4.
        case "I2/5": return 7 * n + 8
        case "Codabar": return 10 * n
        case "DataBar": return 96
        default: return nil
        }
    }

    /// Whether an EAN-13 text is the EAN-13 form of a number a UPC-E can write: a leading 0, then a UPC-A of
    /// number system 0 or 1 whose manufacturer and product codes have the zeros UPC-E leaves out (manufacturer
    /// ending in 000, 100 or 200 with a product under 1000; ending in 00 with a product under 100; ending in 0 with
    /// a product under 10; or a product of 5 to 9 after four zeros).
    static func couldBeUPCE(_ ean13: String) -> Bool {
        let d = ean13.utf8.map { Int($0) - 48 }
        guard d.count == 13, d.allSatisfy({ (0...9).contains($0) }), d[0] == 0, d[1] <= 1 else { return false }
        let m = Array(d[2..<7])
        let p = Array(d[7..<12])
        if m[2] <= 2 && m[3] == 0 && m[4] == 0 && p[0] == 0 && p[1] == 0 { return true }
        if m[3] == 0 && m[4] == 0 && p[0] == 0 && p[1] == 0 && p[2] == 0 { return true }
        if m[4] == 0 && p[0...3].allSatisfy({ $0 == 0 }) { return true }
        return p[0...3].allSatisfy({ $0 == 0 }) && p[4] >= 5
    }

    /// The longest side of the polygon (the distance for two points): how far the code runs at least.
    static func length(of polygon: [Point]) -> Double {
        var longest = 0.0
        for i in polygon.indices {
            let a = polygon[i]
            let b = polygon[(i + 1) % polygon.count]
            longest = max(longest, ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot())
        }
        return longest
    }
}
