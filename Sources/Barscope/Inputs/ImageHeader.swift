import Foundation

/// The pixel size a still image declares in its header (PNG, JPEG, GIF, BMP, TIFF, WebP), read before any decoder
/// sees the file.
///
/// Why: a decoder allocates the whole picture before it decodes a row, so a 30000x30000 PNG of 150 KB made
/// `barscope scan` take 1.8 GB and 33 s. The header is a few bytes; refusing there keeps memory bounded whatever
/// the file claims. Headers we cannot read are left to GStreamer, which then says what is wrong.
public enum ImageHeader {
    /// Still images above this many pixels are refused: 120 megapixels covers the largest phone and camera
    /// sensors (108 MP), and decodes (RGBA plus the grey copy) in about 600 MB.
    public static let maximumPixels = 120_000_000

    /// The declared size, or nil when `bytes` does not start like an image header this reader knows.
    public static func size(of bytes: [UInt8]) -> Size? {
        func be16(_ i: Int) -> Int? { i + 2 <= bytes.count ? Int(bytes[i]) << 8 | Int(bytes[i + 1]) : nil }
        func le16(_ i: Int) -> Int? { i + 2 <= bytes.count ? Int(bytes[i + 1]) << 8 | Int(bytes[i]) : nil }
        func be32(_ i: Int) -> Int? {
            guard let hi = be16(i), let lo = be16(i + 2) else { return nil }
            return hi << 16 | lo
        }
        func le32(_ i: Int) -> Int? {
            guard let lo = le16(i), let hi = le16(i + 2) else { return nil }
            return hi << 16 | lo
        }
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + magic.count && Array(bytes[offset..<offset + magic.count]) == magic
        }
        func made(_ w: Int?, _ h: Int?) -> Size? {
            guard let w, let h, w > 0, h > 0 else { return nil }
            return Size(width: w, height: h)
        }

        // PNG: the IHDR chunk comes first, width and height big-endian.
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) && starts(Array("IHDR".utf8), at: 12) {
            return made(be32(16), be32(20))
        }
        // GIF: the logical screen, little-endian 16-bit.
        if starts(Array("GIF8".utf8)) { return made(le16(6), le16(8)) }
        // BMP: BITMAPINFOHEADER; a negative height means top-down rows.
        if starts(Array("BM".utf8)), let w = le32(18), let h = le32(22) {
            return made(abs(Int(Int32(truncatingIfNeeded: w))), abs(Int(Int32(truncatingIfNeeded: h))))
        }
        // WebP: lossy (VP8), lossless (VP8L) or extended (VP8X, the canvas).
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) {
            if starts(Array("VP8 ".utf8), at: 12), let w = le16(26), let h = le16(28) {
                return made(w & 0x3FFF, h & 0x3FFF)
            }
            if starts(Array("VP8L".utf8), at: 12), bytes.count >= 25 {
                let b = (1...4).map { Int(bytes[20 + $0]) }
                return made(1 + (b[0] | (b[1] & 0x3F) << 8), 1 + (b[1] >> 6 | b[2] << 2 | (b[3] & 0x0F) << 10))
            }
            if starts(Array("VP8X".utf8), at: 12), bytes.count >= 30 {
                let w = Int(bytes[24]) | Int(bytes[25]) << 8 | Int(bytes[26]) << 16
                let h = Int(bytes[27]) | Int(bytes[28]) << 8 | Int(bytes[29]) << 16
                return made(w + 1, h + 1)
            }
            return nil
        }
        // JPEG: walk the markers to the first start-of-frame.
        if starts([0xFF, 0xD8]) {
            var i = 2
            while i + 4 <= bytes.count {
                guard bytes[i] == 0xFF else { return nil }
                let marker = bytes[i + 1]
                if marker == 0xFF {  // fill byte
                    i += 1
                    continue
                }
                if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) {
                    i += 2
                    continue
                }
                guard let length = be16(i + 2), length >= 2 else { return nil }
                let isFrame = (0xC0...0xCF).contains(marker) && ![0xC4, 0xC8, 0xCC].contains(marker)
                if isFrame { return made(be16(i + 7), be16(i + 5)) }
                i += 2 + length
            }
            return nil
        }
        // TIFF: the first directory's ImageWidth (256) and ImageLength (257).
        let little = starts([0x49, 0x49, 0x2A, 0x00])
        if little || starts([0x4D, 0x4D, 0x00, 0x2A]) {
            let u16 = little ? le16 : be16
            let u32 = little ? le32 : be32
            guard let ifd = u32(4), let count = u16(ifd) else { return nil }
            var w: Int? = nil
            var h: Int? = nil
            for n in 0..<min(count, 512) {
                let entry = ifd + 2 + 12 * n
                guard let tag = u16(entry), let type = u16(entry + 2) else { break }
                // SHORT (3) values sit in the first two bytes of the field, LONG (4) in all four.
                let value = type == 3 ? u16(entry + 8) : u32(entry + 8)
                if tag == 256 { w = value }
                if tag == 257 { h = value }
            }
            return made(w, h)
        }
        return nil
    }

    /// Refuses a still image whose header declares more than ``maximumPixels``, naming the file and its size.
    /// - Throws: ``BarscopeError/badInput``.
    public static func checkSize(ofFileAt path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { return }
        defer { try? handle.close() }
        // JPEG metadata (EXIF, a thumbnail, ICC) may come before the frame header: 256 KiB covers it.
        let head = [UInt8]((try? handle.read(upToCount: 256 * 1024)) ?? Data())
        guard let s = size(of: head), s.width * s.height > maximumPixels else { return }
        throw BarscopeError.badInput(
            "\(path): the image is \(s.width)x\(s.height) pixels, too large to scan "
                + "(at most \(maximumPixels / 1_000_000) megapixels)")
    }
}
