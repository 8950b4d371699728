import CZXingReader

/// zxing-cpp, the second decoding engine: formats ZBar does not read (DataMatrix, Aztec, PDF417, Micro QR,
/// MaxiCode), and QR text in the character set the code states or implies (Shift-JIS, ECI), where ZBar returns
/// replacement bytes. Results come back in ZBar's naming (`QR-Code`, `EAN-13`, `I2/5` ...) so the two engines' reads
/// can be compared and merged. Stateless and thread-safe (zxing-cpp's reader keeps no state between calls).
public struct ZXingReader: Sendable {
    /// zxing-cpp format bits to look for.
    public var formats: UInt32
    /// Also rotations, inverted and downscaled images: for stills, where time matters less.
    public var tryHarder: Bool
    /// UPC-A and UPC-E as ZBar reports them by default: EAN-13 with a leading 0, UPC-E expanded (ZBar's
    /// `upca.enable` and `upce.enable` turn that off).
    public var upcAAsEAN13: Bool
    public var upcEAsEAN13: Bool
    /// Bookland EAN-13 (978, 979) as ZBar reports it once `isbn10.enable` or `isbn13.enable` is given: ISBN-10
    /// (978 only, its own check digit) before ISBN-13.
    public var isbn10: Bool
    public var isbn13: Bool

    public init(
        formats: UInt32 = ZXingReader.allFormats, tryHarder: Bool = true, upcAAsEAN13: Bool = true,
        upcEAsEAN13: Bool = true, isbn10: Bool = false, isbn13: Bool = false
    ) {
        self.formats = formats
        self.tryHarder = tryHarder
        self.upcAAsEAN13 = upcAAsEAN13
        self.upcEAsEAN13 = upcEAsEAN13
        self.isbn10 = isbn10
        self.isbn13 = isbn13
    }

    public static let allFormats: UInt32 = (1 << 17) - 1
    /// EAN-8, EAN-13, UPC-A and UPC-E.
    static let retailFormats = UInt32(BS_ZX_EAN8 | BS_ZX_EAN13 | BS_ZX_UPCA | BS_ZX_UPCE)

    /// Reads a luma image in place.
    public func read(_ image: LumaImage, mapping: CropMapping = CropMapping(), viewfinder: PixelRect? = nil)
        -> [Detection]
    {
        let capacity = 32
        var results = [bs_zx_result](repeating: bs_zx_result(), count: capacity)
        let count = results.withUnsafeMutableBufferPointer { out in
            bs_zx_read(
                image.base.assumingMemoryBound(to: UInt8.self), Int32(image.width), Int32(image.height),
                Int32(image.stride), formats, tryHarder ? 1 : 0, out.baseAddress, Int32(capacity))
        }
        guard count > 0 else { return [] }
        defer { bs_zx_free(&results, count) }
        return results[0..<Int(count)].compactMap { r in
            guard let name = Self.names[r.format] else { return nil }
            var type = name
            var text = r.text.map { String(cString: $0) } ?? ""
            if r.format == UInt32(BS_ZX_UPCA), upcAAsEAN13 {
                type = "EAN-13"
                text = "0" + text
            } else if r.format == UInt32(BS_ZX_UPCE), upcEAsEAN13, let upcA = Self.expandUPCE(text) {
                type = "EAN-13"
                text = "0" + upcA
            } else if r.format == UInt32(BS_ZX_DATABAR), text.count == 14 {
                // zxing-cpp gives the GTIN; ZBar (and the code itself) lead with its application identifier, 01.
                text = "01" + text
            }
            if type == "EAN-13", let (isbnType, isbnText) = bookland(text) {
                type = isbnType
                text = isbnText
            }
            let c = r.corners
            // zxing: top-left, top-right, bottom-right, bottom-left; ours (ZBar's order): TL, BL, BR, TR.
            var polygon = [Point(c.0, c.1), Point(c.6, c.7), Point(c.4, c.5), Point(c.2, c.3)].map(mapping.toFrame)
            if polygon.allSatisfy({ $0 == polygon[0] }) { polygon = [polygon[0]] }
            var d = Detection(type: type, data: text, quality: Int(r.line_count), polygon: polygon)
            d.engine = "zxing"
            if r.sequence_index >= 0 {
                let id = r.sequence_id.map { String(cString: $0) } ?? ""
                d.sequence = StructuredAppend(
                    index: Int(r.sequence_index), count: Int(r.sequence_size), id: id.isEmpty ? nil : id)
            }
            if r.content_type == Int32(BS_ZX_BINARY), let bytes = r.bytes {
                d.binary = Array(UnsafeBufferPointer(start: bytes, count: Int(r.length)))
            }
            d.inViewfinder = viewfinder.map { $0.contains(all: polygon) } ?? true
            return d
        }
    }

    /// An EAN-13 in ZBar's ISBN naming, when its settings ask for it (ZBar's rule: ISBN-10 for 978 when enabled,
    /// else ISBN-13 for 978 and 979); nil when it stays EAN-13.
    func bookland(_ ean: String) -> (String, String)? {
        let digits = ean.compactMap(\.wholeNumberValue)
        guard digits.count == 13, ean.count == 13, digits[0] == 9, digits[1] == 7 else { return nil }
        if digits[2] == 8, isbn10 {
            // The nine digits after 978, and ISBN-10's own check: weights 10...2, modulo 11, X for 10.
            let body = digits[3..<12]
            let sum = zip(body, (2...10).reversed()).reduce(0) { $0 + $1.0 * $1.1 }
            let check = (11 - sum % 11) % 11
            return ("ISBN-10", body.map(String.init).joined() + (check == 10 ? "X" : String(check)))
        }
        if digits[2] == 8 || digits[2] == 9, isbn13 { return ("ISBN-13", ean) }
        return nil
    }

    /// The UPC-A number a UPC-E code stands for (number system, six digits, check digit), by the zero-suppression
    /// rule its sixth digit names. Nil for anything but 8 digits.
    static func expandUPCE(_ upcE: String) -> String? {
        let d = Array(upcE)
        guard d.count == 8, d.allSatisfy(\.isASCII), d.allSatisfy(\.isNumber) else { return nil }
        let n = d[0]
        let m = d[1...6].map { String($0) }
        let check = d[7]
        let body: String
        switch d[6] {
        case "0", "1", "2": body = m[0] + m[1] + m[5] + "0000" + m[2] + m[3] + m[4]
        case "3": body = m[0] + m[1] + m[2] + "00000" + m[3] + m[4]
        case "4": body = m[0] + m[1] + m[2] + m[3] + "00000" + m[4]
        default: body = m[0] + m[1] + m[2] + m[3] + m[4] + "0000" + m[5]
        }
        return String(n) + body + String(check)
    }

    /// zxing-cpp's formats in ZBar's names (and ZBar-style names for the formats ZBar does not have).
    static let names: [UInt32: String] = [
        UInt32(BS_ZX_AZTEC): "Aztec", UInt32(BS_ZX_CODABAR): "Codabar", UInt32(BS_ZX_CODE39): "CODE-39",
        UInt32(BS_ZX_CODE93): "CODE-93", UInt32(BS_ZX_CODE128): "CODE-128", UInt32(BS_ZX_DATABAR): "DataBar",
        UInt32(BS_ZX_DATABAR_EXPANDED): "DataBar-Exp", UInt32(BS_ZX_DATAMATRIX): "DataMatrix",
        UInt32(BS_ZX_EAN8): "EAN-8", UInt32(BS_ZX_EAN13): "EAN-13", UInt32(BS_ZX_ITF): "I2/5",
        UInt32(BS_ZX_MAXICODE): "MaxiCode", UInt32(BS_ZX_PDF417): "PDF417", UInt32(BS_ZX_QRCODE): "QR-Code",
        UInt32(BS_ZX_UPCA): "UPC-A", UInt32(BS_ZX_UPCE): "UPC-E", UInt32(BS_ZX_MICROQR): "Micro-QR",
    ]
}
