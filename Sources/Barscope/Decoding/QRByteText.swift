import Foundation

/// The text of a QR code's byte segments when the code names no character set (no ECI): the guess every reader
/// has to make. ISO/IEC 18004 made Shift-JIS the default in 2000 and ISO-8859-1 in 2005, and encoders write UTF-8;
/// so the bytes are read as the first of these they can be, judged as text in that set:
///
/// 1. UTF-8 when they are valid UTF-8 (ASCII included; a chance run of other bytes is seldom valid UTF-8);
/// 2. Shift-JIS when they are valid Shift-JIS and either ISO-8859-1 cannot be meant (a byte in 0x80-0x9F, its
///    control range, where Shift-JIS puts most of its lead bytes) or the Shift-JIS reading has a Japanese word (three
///    or more non-ASCII characters in a row: accented letters of Latin text seldom come three together);
/// 3. ISO-8859-1 when its reading is text (no control characters but tab, line breaks and GS, which GS1 uses);
/// 4. otherwise a binary payload: nil, and the bytes are kept as they are.
///
/// ZBar's own guess also tries Big5 and takes it whenever the bytes fit Big5's ranges, which Shift-JIS's half-width
/// katakana and even UTF-8 Chinese do: `ﾃﾞｻﾞｲﾝ` came back as `蹬靼翌` and UTF-8 `測試` as `皜祈岫`, the same in
/// every frame. Scanning asks ZBar for the raw bytes (its binary mode) and reads them here.
enum QRByteText {
    static func text(_ bytes: [UInt8]) -> String? {
        if let utf8 = String(validating: bytes, as: UTF8.self) {
            return utf8.hasPrefix("\u{FEFF}") ? String(utf8.dropFirst()) : utf8
        }
        let latin1IsText = bytes.allSatisfy { b in
            (b >= 0x20 && b < 0x7F) || b >= 0xA0 || b == 0x09 || b == 0x0A || b == 0x0D || b == 0x1D
        }
        if let sjis = String(bytes: bytes, encoding: .shiftJIS) {
            let latin1Possible = latin1IsText && !bytes.contains { (0x80...0x9F).contains($0) }
            if !latin1Possible || longestNonASCIIRun(sjis) >= 3 { return sjis }
        }
        return latin1IsText ? String(bytes: bytes, encoding: .isoLatin1) : nil
    }

    private static func longestNonASCIIRun(_ s: String) -> Int {
        var longest = 0
        var run = 0
        for c in s.unicodeScalars {
            run = c.isASCII ? 0 : run + 1
            longest = max(longest, run)
        }
        return longest
    }
}
