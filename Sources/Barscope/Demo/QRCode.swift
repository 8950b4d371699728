import CQREncode

/// QR codes through libqrencode (byte mode, error correction M).
public enum QRCode {
    public static func symbol(_ text: String) throws -> BarcodeSymbol {
        guard let code = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else {
            throw BarscopeError.badValue("QR '\(text)': libqrencode cannot encode it")
        }
        defer { QRcode_free(code) }
        return symbol(code, text: text)
    }

    /// A QR code of raw bytes in byte mode, no ECI: a binary payload, or text in a legacy character set
    /// (Shift-JIS, as Japanese phones write it). `text` is what a reader should report.
    public static func symbol(bytes: [UInt8], text: String) throws -> BarcodeSymbol {
        guard
            let code = bytes.withUnsafeBufferPointer({
                QRcode_encodeData(Int32($0.count), $0.baseAddress, 0, QR_ECLEVEL_M)
            })
        else {
            throw BarscopeError.badValue("QR of \(bytes.count) bytes: libqrencode cannot encode it")
        }
        defer { QRcode_free(code) }
        return symbol(code, text: text)
    }

    /// A QR code of UTF-8 text preceded by an ECI header naming UTF-8 (ECI 26), as careful encoders write
    /// non-ASCII text.
    public static func symbol(utf8WithECI text: String) throws -> BarcodeSymbol {
        let bytes = Array(text.utf8)
        guard let input = QRinput_new2(0, QR_ECLEVEL_M) else {
            throw BarscopeError.badValue("QR '\(text)': libqrencode cannot make an input")
        }
        defer { QRinput_free(input) }
        // The ECI header first, then the bytes it describes.
        guard QRinput_appendECIheader(input, 26) == 0,
            bytes.withUnsafeBufferPointer({ QRinput_append(input, QR_MODE_8, Int32($0.count), $0.baseAddress) }) == 0,
            let code = QRcode_encodeInput(input)
        else { throw BarscopeError.badValue("QR '\(text)': libqrencode cannot encode it") }
        defer { QRcode_free(code) }
        return symbol(code, text: text)
    }

    /// A message split over several QR codes, structured append (ISO/IEC 18004 §7.4.11): each symbol names its
    /// position, the count and the parity of the whole message. libqrencode splits `text` (byte mode, level M)
    /// into as many symbols of `version` as it needs.
    /// - Throws: ``BarscopeError/badValue`` when libqrencode cannot (a version too small for the header alone).
    public static func structuredAppend(_ text: String, version: Int) throws -> [BarcodeSymbol] {
        guard let list = QRcode_encodeString8bitStructured(text, Int32(version), QR_ECLEVEL_M) else {
            throw BarscopeError.badValue("QR '\(text)': libqrencode cannot split it into version \(version) symbols")
        }
        defer { QRcode_List_free(list) }
        var out: [BarcodeSymbol] = []
        var entry: UnsafeMutablePointer<QRcode_List>? = list
        while let e = entry {
            if let code = e.pointee.code { out.append(symbol(code, text: text)) }
            entry = e.pointee.next
        }
        return out
    }

    /// The modules of libqrencode's result (bit 0 of each byte: dark), with the standard 4-module quiet zone.
    private static func symbol(_ code: UnsafeMutablePointer<QRcode>, text: String) -> BarcodeSymbol {
        let n = Int(code.pointee.width)
        let rows = (0..<n).map { r in (0..<n).map { c in code.pointee.data[r * n + c] & 1 == 1 } }
        return BarcodeSymbol(type: "QR-Code", text: text, modules: rows, quietZone: 4)
    }
}
