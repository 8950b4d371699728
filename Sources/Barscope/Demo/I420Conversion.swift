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
            // Eight pixels (four chroma samples) at a time, with the scalar loop's arithmetic to the bit.
            while x + 8 <= x1 {
                convertEight(row0 + x * 4, row1 + x * 4, luma0 + x, luma1 + x, cb + (x >> 1), cr + (x >> 1))
                x += 8
            }
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

    /// Eight pixels of two rows (BGRx) to their luma and the four 2x2 blocks' chroma: as `convert`'s scalar loop,
    /// in SIMD lanes (the demo source converts every drawn area of every frame: 12 % of 6 demo streams' CPU when
    /// scalar).
    @inline(__always)
    private func convertEight(
        _ p0: UnsafePointer<UInt8>, _ p1: UnsafePointer<UInt8>, _ y0: UnsafeMutablePointer<UInt8>,
        _ y1: UnsafeMutablePointer<UInt8>, _ cb: UnsafeMutablePointer<UInt8>, _ cr: UnsafeMutablePointer<UInt8>
    ) {
        let top = UnsafeRawPointer(p0).loadUnaligned(as: SIMD32<UInt8>.self)
        let bottom = UnsafeRawPointer(p1).loadUnaligned(as: SIMD32<UInt8>.self)
        // BGRx BGRx ...: the even bytes are B and R in turn, the odd ones G and x.
        let (topEven, topOdd, bottomEven, bottomOdd) = (top.evenHalf, top.oddHalf, bottom.evenHalf, bottom.oddHalf)
        let r0 = SIMD8<Int32>(truncatingIfNeeded: topEven.oddHalf)
        let g0 = SIMD8<Int32>(truncatingIfNeeded: topOdd.evenHalf)
        let b0 = SIMD8<Int32>(truncatingIfNeeded: topEven.evenHalf)
        let r1 = SIMD8<Int32>(truncatingIfNeeded: bottomEven.oddHalf)
        let g1 = SIMD8<Int32>(truncatingIfNeeded: bottomOdd.evenHalf)
        let b1 = SIMD8<Int32>(truncatingIfNeeded: bottomEven.evenHalf)
        let (kr, kg, kb) = (Int32(yr), Int32(yg), Int32(yb))
        let lumaOffset = SIMD8<Int32>(repeating: Int32((16 << 16) + (1 << 15)))
        let l0 = (kr &* r0 &+ kg &* g0 &+ kb &* b0 &+ lumaOffset) &>> 16
        let l1 = (kr &* r1 &+ kg &* g1 &+ kb &* b1 &+ lumaOffset) &>> 16
        UnsafeMutableRawPointer(y0).storeBytes(of: SIMD8<UInt8>(truncatingIfNeeded: l0), as: SIMD8<UInt8>.self)
        UnsafeMutableRawPointer(y1).storeBytes(of: SIMD8<UInt8>(truncatingIfNeeded: l1), as: SIMD8<UInt8>.self)
        // Each block's sums: two pixels of each row.
        let (r, g, b) = (r0 &+ r1, g0 &+ g1, b0 &+ b1)
        let rs = r.evenHalf &+ r.oddHalf
        let gs = g.evenHalf &+ g.oddHalf
        let bs = b.evenHalf &+ b.oddHalf
        let chromaOffset = SIMD4<Int32>(repeating: Int32((128 << 18) + (1 << 17)))
        let u = Int32(ur) &* rs &+ Int32(ug) &* gs &+ Int32(ub) &* bs &+ chromaOffset
        let v = Int32(vr) &* rs &+ Int32(vg) &* gs &+ Int32(vb) &* bs &+ chromaOffset
        UnsafeMutableRawPointer(cb).storeBytes(of: SIMD4<UInt8>(truncatingIfNeeded: u &>> 18), as: SIMD4<UInt8>.self)
        UnsafeMutableRawPointer(cr).storeBytes(of: SIMD4<UInt8>(truncatingIfNeeded: v &>> 18), as: SIMD4<UInt8>.self)
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
