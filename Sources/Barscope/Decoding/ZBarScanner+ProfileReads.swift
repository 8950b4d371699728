import CZBar

/// Reads of a bar profile drawn as rows (`HardCodeReader`'s): texts and x extents, no boxes.
extension ZBarScanner {
    /// One 1D read of a synthetic image (a bar profile drawn as rows, `HardCodeReader`): its type, text and where
    /// along x its hits lie; no box, no refinement (the image is not a picture of the code).
    struct ProfileRead {
        let type: String
        let data: String
        let xRange: ClosedRange<Double>
    }

    /// Scans an image along its rows alone for 1D codes, giving texts and x extents only.
    func profileReads(_ image: LumaImage) -> [ProfileRead] {
        scanned(image) { zimage in Self.profileReads(of: zimage) } ?? []
    }

    private static func profileReads(of zimage: OpaquePointer) -> [ProfileRead] {
        var out: [ProfileRead] = []
        var symbol = zbar_image_first_symbol(zimage)
        while let s = symbol {
            defer { symbol = zbar_symbol_next(s) }
            let type = zbar_symbol_get_type(s)
            guard !isTwoDimensional(type), zbar_symbol_get_loc_size(s) > 0 else { continue }
            let xs = (0..<zbar_symbol_get_loc_size(s)).map { Double(zbar_symbol_get_loc_x(s, $0)) }
            out.append(
                ProfileRead(
                    type: String(cString: zbar_get_symbol_name(type)),
                    data: String(decoding: bytes(of: s), as: UTF8.self), xRange: xs.min()!...xs.max()!))
        }
        return out
    }
}
