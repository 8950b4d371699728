import Foundation

/// An owned luma image made from another by scaling, rotating or remapping grey levels, for the second passes a
/// first read that found nothing earns. It remembers how to map its points back to the source image.
struct TransformedLuma {
    let pixels: [UInt8]
    let width: Int
    let height: Int
    /// From this image's pixels to the source's.
    let toSource: @Sendable (Point) -> Point

    /// Lends the pixels as a `LumaImage`.
    func withImage<R>(_ body: (LumaImage) -> R) -> R {
        pixels.withUnsafeBytes { body(LumaImage(base: $0.baseAddress!, width: width, height: height, stride: width)) }
    }

    /// A copy with every pixel `v` replaced by `table[v]`: inversion, contrast stretch.
    static func remapped(_ image: LumaImage, _ table: [UInt8]) -> TransformedLuma {
        var out = [UInt8](repeating: 0, count: image.width * image.height)
        let src = image.base.assumingMemoryBound(to: UInt8.self)
        for y in 0..<image.height {
            let row = src + y * image.stride
            for x in 0..<image.width { out[y * image.width + x] = table[Int(row[x])] }
        }
        return TransformedLuma(pixels: out, width: image.width, height: image.height, toSource: { $0 })
    }

    /// Scaled by `factor` (0.5 averages 2x2 blocks, `LumaImage.halve`: less noise and blur for oversized, soft
    /// codes; other factors interpolate, 2 giving more pixels a module for codes too small for ZBar's edges).
    static func scaled(_ image: LumaImage, by factor: Double) -> TransformedLuma {
        let halving = factor == 0.5 && image.width >= 2 && image.height >= 2
        let (w, h) = scaledSize(width: image.width, height: image.height, by: factor)
        let src = image.base.assumingMemoryBound(to: UInt8.self)
        var out = [UInt8](repeating: 0, count: w * h)
        if halving {
            out.withUnsafeMutableBufferPointer { image.halve(into: $0.baseAddress!) }
        } else {
            for y in 0..<h {
                for x in 0..<w {
                    out[y * w + x] = bilinear(
                        image, src, (Double(x) + 0.5) / factor - 0.5, (Double(y) + 0.5) / factor - 0.5)
                }
            }
        }
        let sx = Double(image.width) / Double(w)
        let sy = Double(image.height) / Double(h)
        return TransformedLuma(pixels: out, width: w, height: h, toSource: { Point($0.x * sx, $0.y * sy) })
    }

    /// The size `scaled` makes (halving: whole 2x2 blocks).
    static func scaledSize(width: Int, height: Int, by factor: Double) -> (width: Int, height: Int) {
        if factor == 0.5 && width >= 2 && height >= 2 { return (width / 2, height / 2) }
        return (max(1, Int((Double(width) * factor).rounded())), max(1, Int((Double(height) * factor).rounded())))
    }

    /// The size `rotated` makes: the canvas that holds the whole rotated image.
    static func rotatedSize(width: Int, height: Int, degrees: Double) -> (width: Int, height: Int) {
        let a = degrees * .pi / 180
        let w0 = Double(width)
        let h0 = Double(height)
        return (
            Int((abs(w0 * cos(a)) + abs(h0 * sin(a))).rounded(.up)),
            Int((abs(w0 * sin(a)) + abs(h0 * cos(a))).rounded(.up))
        )
    }

    /// Rotated by `degrees` about the centre, on a canvas large enough to hold all of it (the corners white),
    /// so that a 1D code at that angle lies along ZBar's rows.
    static func rotated(_ image: LumaImage, degrees: Double) -> TransformedLuma {
        let a = degrees * .pi / 180
        let c = cos(a)
        let s = sin(a)
        let w0 = Double(image.width)
        let h0 = Double(image.height)
        let (w, h) = rotatedSize(width: image.width, height: image.height, degrees: degrees)
        let cx0 = w0 / 2
        let cy0 = h0 / 2
        let cx = Double(w) / 2
        let cy = Double(h) / 2
        let src = image.base.assumingMemoryBound(to: UInt8.self)
        var out = [UInt8](repeating: 255, count: w * h)
        for y in 0..<h {
            let dy = Double(y) + 0.5 - cy
            for x in 0..<w {
                let dx = Double(x) + 0.5 - cx
                // Inverse rotation: where in the source this output pixel comes from.
                let sx = c * dx + s * dy + cx0 - 0.5
                let sy = -s * dx + c * dy + cy0 - 0.5
                if sx >= 0, sy >= 0, sx <= w0 - 1, sy <= h0 - 1 { out[y * w + x] = bilinear(image, src, sx, sy) }
            }
        }
        return TransformedLuma(
            pixels: out, width: w, height: h,
            toSource: { p in
                let dx = p.x - cx
                let dy = p.y - cy
                return Point(c * dx + s * dy + cx0, -s * dx + c * dy + cy0)
            })
    }

    private static func bilinear(_ image: LumaImage, _ src: UnsafePointer<UInt8>, _ x: Double, _ y: Double) -> UInt8 {
        let x0 = min(max(0, Int(x)), image.width - 1)
        let y0 = min(max(0, Int(y)), image.height - 1)
        let x1 = min(x0 + 1, image.width - 1)
        let y1 = min(y0 + 1, image.height - 1)
        let fx = min(max(x - Double(x0), 0), 1)
        let fy = min(max(y - Double(y0), 0), 1)
        let r0 = src + y0 * image.stride
        let r1 = src + y1 * image.stride
        let top = Double(r0[x0]) * (1 - fx) + Double(r0[x1]) * fx
        let bottom = Double(r1[x0]) * (1 - fx) + Double(r1[x1]) * fx
        return UInt8(min(255, max(0, (top * (1 - fy) + bottom * fy).rounded())))
    }

    /// Levels from the 2nd to the 98th percentile spread over 0...255: a faded print, a low-contrast photo. ZBar's
    /// edge detector wants steps of some size between a bar and a space; stretched, a grey-on-grey code's are as
    /// large as a black-on-white one's.
    static func stretched(_ image: LumaImage) -> TransformedLuma {
        var out = [UInt8](repeating: 0, count: image.width * image.height)
        out.withUnsafeMutableBufferPointer { stretch(image, into: $0.baseAddress!) }
        return TransformedLuma(pixels: out, width: image.width, height: image.height, toSource: { $0 })
    }

    /// `stretched`'s work, into `out` (width × height, compact); its histogram and table on the stack (a video
    /// frame where nothing is read is stretched: nothing allocated for it).
    static func stretch(_ image: LumaImage, into out: UnsafeMutablePointer<UInt8>) {
        withUnsafeTemporaryAllocation(of: Int.self, capacity: 256) { histogram in
            histogram.initialize(repeating: 0)
            let src = image.base.assumingMemoryBound(to: UInt8.self)
            for y in 0..<image.height { for x in 0..<image.width { histogram[Int(src[y * image.stride + x])] += 1 } }
            let tail = image.width * image.height / 50
            var (low, high, seen) = (0, 255, 0)
            for v in 0...255 {
                seen += histogram[v]
                if seen >= tail {
                    low = v
                    break
                }
            }
            seen = 0
            for v in (0...255).reversed() {
                seen += histogram[v]
                if seen >= tail {
                    high = v
                    break
                }
            }
            let span = max(1, high - low)
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { table in
                for v in 0...255 { table[v] = UInt8(min(255, max(0, (v - low) * 255 / span))) }
                for y in 0..<image.height {
                    let row = src + y * image.stride
                    let to = out + y * image.width
                    for x in 0..<image.width { to[x] = table[Int(row[x])] }
                }
            }
        }
    }

    /// Each pixel against the mean of its neighbourhood (a box an eighth of the image's smaller side wide, at least
    /// 15 px), as black or white: glare and shadow across a code no longer move the threshold ZBar's edge detector
    /// sees.
    static func binarized(_ image: LumaImage) -> TransformedLuma {
        var out = [UInt8](repeating: 0, count: image.width * image.height)
        var integral: [UInt32] = []
        out.withUnsafeMutableBufferPointer { binarize(image, into: $0.baseAddress!, integral: &integral) }
        return TransformedLuma(pixels: out, width: image.width, height: image.height, toSource: { $0 })
    }

    /// `binarized`'s work, into `out` (width × height, compact), with `integral` a buffer the caller may keep from
    /// one image to the next (grown as needed): a video frame's pass allocates nothing. The sums are kept modulo
    /// 2^32 (half the memory of whole integers: 2 MB for a half-size 1080p frame): a box's sum, the difference of
    /// four of them, is exact so long as it is under 2^32, and a box of 255s would need 16 million pixels.
    static func binarize(_ image: LumaImage, into out: UnsafeMutablePointer<UInt8>, integral: inout [UInt32]) {
        let w = image.width
        let h = image.height
        let r = max(1, max(15, min(w, h) / 8) / 2)
        let src = image.base.assumingMemoryBound(to: UInt8.self)
        // Integral image: one pass, then every box sum in constant time (its first row and column stay 0).
        if integral.count < (w + 1) * (h + 1) { integral = [UInt32](repeating: 0, count: (w + 1) * (h + 1)) }
        integral.withUnsafeMutableBufferPointer { sums in
            for x in 0...w { sums[x] = 0 }
            for y in 0..<h {
                var rowSum: UInt32 = 0
                sums[(y + 1) * (w + 1)] = 0
                for x in 0..<w {
                    rowSum &+= UInt32(src[y * image.stride + x])
                    sums[(y + 1) * (w + 1) + x + 1] = sums[y * (w + 1) + x + 1] &+ rowSum
                }
            }
            for y in 0..<h {
                let y0 = max(0, y - r)
                let y1 = min(h, y + r + 1)
                for x in 0..<w {
                    let x0 = max(0, x - r)
                    let x1 = min(w, x + r + 1)
                    let sum =
                        sums[y1 * (w + 1) + x1] &- sums[y0 * (w + 1) + x1] &- sums[y1 * (w + 1) + x0]
                        &+ sums[y0 * (w + 1) + x0]
                    let mean = Int(sum) / ((y1 - y0) * (x1 - x0))
                    // A little below the mean, so flat paper stays white rather than turning to noise.
                    out[y * w + x] = Int(src[y * image.stride + x]) * 100 < mean * 93 ? 0 : 255
                }
            }
        }
    }

    /// Unsharp mask (the pixel minus its 3x3 neighbourhood's blur, added back): soft edges of a blurred photo.
    static func sharpened(_ image: LumaImage) -> TransformedLuma {
        let w = image.width
        let h = image.height
        let src = image.base.assumingMemoryBound(to: UInt8.self)
        var out = [UInt8](repeating: 0, count: w * h)
        for y in 0..<h {
            for x in 0..<w {
                var sum = 0
                for dy in -1...1 {
                    let row = src + min(h - 1, max(0, y + dy)) * image.stride
                    for dx in -1...1 { sum += Int(row[min(w - 1, max(0, x + dx))]) }
                }
                let v = Int(src[y * image.stride + x])
                out[y * w + x] = UInt8(min(255, max(0, v + 2 * (v - sum / 9))))
            }
        }
        return TransformedLuma(pixels: out, width: w, height: h, toSource: { $0 })
    }
}
