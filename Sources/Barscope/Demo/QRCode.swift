import CQREncode

/// QR codes through libqrencode (byte mode, error correction M).
public enum QRCode {
    public static func symbol(_ text: String) throws -> BarcodeSymbol {
        guard let code = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else {
            throw BarscopeError.badValue("QR '\(text)': libqrencode cannot encode it")
        }
        defer { QRcode_free(code) }
        let n = Int(code.pointee.width)
        var rows: [[Bool]] = []
        for r in 0..<n {
            rows.append((0..<n).map { c in code.pointee.data[r * n + c] & 1 == 1 })
        }
        return BarcodeSymbol(type: "QR-Code", text: text, modules: rows, quietZone: 4)
    }

    /// A QR code of raw bytes in byte mode, no ECI: a binary payload, or text in a legacy character set
    /// (Shift-JIS, as Japanese phones write it). `text` is what a reader should report.
    public static func symbol(bytes: [UInt8], text: String) throws -> BarcodeSymbol {
        guard let code = bytes.withUnsafeBufferPointer({ QRcode_encodeData(Int32($0.count), $0.baseAddress, 0, QR_ECLEVEL_M) })
        else {
            throw BarscopeError.badValue("QR of \(bytes.count) bytes: libqrencode cannot encode it")
        }
        defer { QRcode_free(code) }
        let n = Int(code.pointee.width)
        let rows = (0..<n).map { r in (0..<n).map { c in code.pointee.data[r * n + c] & 1 == 1 } }
        return BarcodeSymbol(type: "QR-Code", text: text, modules: rows, quietZone: 4)
    }
}
