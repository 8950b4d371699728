/// The three planes of one I420 frame (luma, then Cb and Cr at half width and height), with their strides.
struct I420Planes {
    var y: UnsafeMutablePointer<UInt8>
    var u: UnsafeMutablePointer<UInt8>
    var v: UnsafeMutablePointer<UInt8>
    var yStride: Int
    var uStride: Int
    var vStride: Int
}

/// BGRx to I420 in limited range, with the matrix GStreamer gives YUV of that height (BT.709 above 576 lines,
/// BT.601 up to it): luma per pixel, chroma from the mean colour of each 2x2 block. The demo source draws with
/// cairo (RGB) and hands out I420, as a camera or a decoder does: the scanner then reads its luma plane as it is.
struct I420Converter: Sendable {
    /// Coefficients in 1/65536: luma from R, G, B; Cb and Cr from the sums of a block's four pixels.
    private let yr, yg, yb, ur, ug, ub, vr, vg, vb: Int
    /// The colorimetry's name in caps.
    let colorimetry: String

    init(height: Int) {
        let bt709 = height > 576
        colorimetry = bt709 ? "bt709" : "bt601"
        let kr = bt709 ? 0.2126 : 0.299
        let kb = bt709 ? 0.0722 : 0.114
        func fixed(_ v: Double) -> Int { Int((v * 65536).rounded()) }
        let ys = 219.0 / 255
        let cs = 224.0 / 255
        yr = fixed(kr * ys)
        yb = fixed(kb * ys)
        yg = fixed(ys) - yr - yb  // white is exactly 235
        ur = fixed(-kr / (2 * (1 - kb)) * cs)
        ub = fixed(0.5 * cs)
        ug = -ur - ub  // grey is exactly 128
        vr = fixed(0.5 * cs)
        vb = fixed(-kb / (2 * (1 - kr)) * cs)
        vg = -vr - vb
    }

    /// Converts `area` of a BGRx picture (grown to even edges, clipped to `width` x `height`) into `planes`.
    func convert(
        _ bgrx: UnsafePointer<UInt8>, stride: Int, width: Int, height: Int, area: PixelRect, into planes: I420Planes
    ) {
        let x0 = max(0, area.x) & ~1
        let y0 = max(0, area.y) & ~1
        let x1 = min(width, (area.maxX + 1) & ~1)
        let y1 = min(height, (area.maxY + 1) & ~1)
        guard x1 > x0, y1 > y0 else { return }
        // A block's sums are four pixels: a quarter of the coefficients, and 128 plus rounding.
        let chromaOffset = (128 << 18) + (1 << 17)
        var y = y0
        while y < y1 {
            let below = min(y + 1, height - 1)
            let row0 = bgrx + y * stride
            let row1 = bgrx + below * stride
            let luma0 = planes.y + y * planes.yStride
            let luma1 = planes.y + below * planes.yStride
            let cb = planes.u + (y >> 1) * planes.uStride
            let cr = planes.v + (y >> 1) * planes.vStride
            var x = x0
            while x < x1 {
                let right = min(x + 1, width - 1)
                let a = luma(row0 + x * 4, into: luma0 + x)
                let b = luma(row0 + right * 4, into: luma0 + right)
                let c = luma(row1 + x * 4, into: luma1 + x)
                let d = luma(row1 + right * 4, into: luma1 + right)
                let rs = a.r + b.r + c.r + d.r
                let gs = a.g + b.g + c.g + d.g
                let bs = a.b + b.b + c.b + d.b
                cb[x >> 1] = UInt8(truncatingIfNeeded: (ur * rs + ug * gs + ub * bs + chromaOffset) >> 18)
                cr[x >> 1] = UInt8(truncatingIfNeeded: (vr * rs + vg * gs + vb * bs + chromaOffset) >> 18)
                x += 2
            }
            y += 2
        }
    }

    /// Writes one pixel's luma; returns its colour.
    @inline(__always)
    private func luma(_ p: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<UInt8>) -> (r: Int, g: Int, b: Int) {
        let b = Int(p[0])
        let g = Int(p[1])
        let r = Int(p[2])
        out.pointee = UInt8(truncatingIfNeeded: (yr * r + yg * g + yb * b + (16 << 16) + (1 << 15)) >> 16)
        return (r, g, b)
    }
}
