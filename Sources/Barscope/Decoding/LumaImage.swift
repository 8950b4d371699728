/// A non-owning view of an 8-bit luma plane: ZBar reads it in place, whatever the row padding.
///
/// Valid only inside the closure that lends it (see `VideoFrameMapping.withLumaPlane`).
public struct LumaImage {
    public let base: UnsafeRawPointer
    public let width: Int
    public let height: Int
    /// Bytes from one row to the next (at least `width`; GStreamer pads GRAY8 rows to a multiple of 4).
    public let stride: Int

    /// The part of this image inside `rect` (clamped), sharing its memory: same stride, base at the corner.
    public func cropped(to rect: PixelRect) -> LumaImage? {
        let x0 = max(0, rect.x)
        let y0 = max(0, rect.y)
        let x1 = min(width, rect.maxX)
        let y1 = min(height, rect.maxY)
        guard x1 > x0, y1 > y0 else { return nil }
        return LumaImage(base: base + y0 * stride + x0, width: x1 - x0, height: y1 - y0, stride: stride)
    }

    /// Copies the pixels into `buffer` with no row padding and lends that copy: for scanning small regions of a
    /// large frame, where ZBar would otherwise walk the whole stride.
    public func compactCopy<R>(into buffer: inout [UInt8], _ body: (LumaImage) -> R) -> R {
        compactCopy(into: &buffer) { copy, _ in body(copy) }
    }

    /// The same, lending the copy's pixels to change too (rows of `width` bytes, no padding).
    func compactCopy<R>(into buffer: inout [UInt8], _ body: (LumaImage, UnsafeMutablePointer<UInt8>) -> R) -> R {
        let count = width * height
        if buffer.count < count { buffer = [UInt8](repeating: 0, count: count) }
        return buffer.withUnsafeMutableBytes { out in
            for y in 0..<height {
                (out.baseAddress! + y * width).copyMemory(from: base + y * stride, byteCount: width)
            }
            let pixels = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
            return body(LumaImage(base: UnsafeRawPointer(pixels), width: width, height: height, stride: width), pixels)
        }
    }

    /// Writes the image at half size into `out` (each 2x2 block averaged; `out` holds width/2 × height/2 bytes,
    /// no row padding): a quarter of the pixels for a search, or a second pass on an oversized, soft code.
    public func halve(into out: UnsafeMutablePointer<UInt8>) {
        let w = width / 2
        let h = height / 2
        let src = base.assumingMemoryBound(to: UInt8.self)
        for y in 0..<h {
            let r0 = src + 2 * y * stride
            let r1 = r0 + stride
            let o = out + y * w
            // Sixteen source columns at a time (eight output pixels): the scalar loop cost 13 instructions a
            // pixel under callgrind, 1.5 % of tracked mode.
            var x = 0
            while x + 8 <= w {
                let a = SIMD16<UInt16>(
                    truncatingIfNeeded: UnsafeRawPointer(r0 + 2 * x).loadUnaligned(as: SIMD16<UInt8>.self))
                let b = SIMD16<UInt16>(
                    truncatingIfNeeded: UnsafeRawPointer(r1 + 2 * x).loadUnaligned(as: SIMD16<UInt8>.self))
                let rows = a &+ b
                let sum = (rows.evenHalf &+ rows.oddHalf &+ 2) &>> 2
                UnsafeMutableRawPointer(o + x).storeBytes(
                    of: SIMD8<UInt8>(truncatingIfNeeded: sum), as: SIMD8<UInt8>.self)
                x += 8
            }
            while x < w {
                let sum = Int(r0[2 * x]) + Int(r0[2 * x + 1]) + Int(r1[2 * x]) + Int(r1[2 * x + 1])
                o[x] = UInt8(truncatingIfNeeded: (sum + 2) >> 2)
                x += 1
            }
        }
    }

    public init(base: UnsafeRawPointer, width: Int, height: Int, stride: Int) {
        precondition(width > 0 && height > 0 && stride >= width, "bad luma geometry")
        self.base = base
        self.width = width
        self.height = height
        self.stride = stride
    }
}
