import Foundation

/// Sampling the luma: bilinear between pixel centres, along a line, at a pixel; and the median.
extension BarOutline {
    /// The luma at a point between pixel centres, interpolated from the four around it (pixel (i, j) covers
    /// i...i+1, j...j+1, its centre at i + 0.5, j + 0.5).
    static func bilinear(_ image: LumaImage, _ x: Double, _ y: Double) -> Double {
        let fx = x - 0.5
        let fy = y - 0.5
        let x0 = min(max(Int(fx.rounded(.down)), 0), image.width - 1)
        let y0 = min(max(Int(fy.rounded(.down)), 0), image.height - 1)
        let x1 = min(x0 + 1, image.width - 1)
        let y1 = min(y0 + 1, image.height - 1)
        let ax = min(max(fx - Double(x0), 0), 1)
        let ay = min(max(fy - Double(y0), 0), 1)
        func at(_ x: Int, _ y: Int) -> Double {
            Double(image.base.load(fromByteOffset: y * image.stride + x, as: UInt8.self))
        }
        let top = at(x0, y0) * (1 - ax) + at(x1, y0) * ax
        let bottom = at(x0, y1) * (1 - ax) + at(x1, y1) * ax
        return top * (1 - ay) + bottom * ay
    }

    /// `count` samples along a line (from `start`, `every` pixels along `step`), each as `bilinear` samples it, in
    /// 16.16 fixed point stepped along the line; nil when the line's ends are not both where all four neighbours of
    /// every sample lie inside the image (then `bilinear`'s clamps are needed). `barEnds` judges a hundred lines
    /// for each code it boxes, in every frame of tracked mode: sampled through `bilinear`, that was 9 % of 6 demo
    /// streams' CPU.
    static func lineSamples(_ image: LumaImage, from start: Point, step: Point, count: Int, every: Int) -> [Double]? {
        guard count > 0 else { return nil }
        let end = Point(
            start.x + step.x * Double((count - 1) * every), start.y + step.y * Double((count - 1) * every))
        func inside(_ p: Point) -> Bool {
            p.x >= 0.5 && p.y >= 0.5 && p.x < Double(image.width) - 0.5 && p.y < Double(image.height) - 0.5
        }
        guard inside(start), inside(end) else { return nil }
        let one = 65536.0
        var fx = Int(((start.x - 0.5) * one).rounded())
        var fy = Int(((start.y - 0.5) * one).rounded())
        let dx = Int((step.x * Double(every) * one).rounded())
        let dy = Int((step.y * Double(every) * one).rounded())
        let base = image.base.assumingMemoryBound(to: UInt8.self)
        let stride = image.stride
        return [Double](unsafeUninitializedCapacity: count) { buffer, initialized in
            // (Wrapping arithmetic: every product fits in 64 bits, at most 255 << 32, so the checks for overflow
            // Swift would make in the loop can never fire.)
            let (xMax, yMax) = ((image.width - 1) << 16, (image.height - 1) << 16)
            for k in 0..<count {
                // (Rounding the steps can carry a sample a hair past the line's ends: the position, fraction and
                // all, is kept on the image, as `bilinear` clamps it.)
                let cx = min(max(fx, 0), xMax)
                let cy = min(max(fy, 0), yMax)
                let xi = min(cx >> 16, image.width - 2)
                let yi = min(cy >> 16, image.height - 2)
                let ax = cx &- (xi << 16)  // up to 65536: the pixel right of xi
                let ay = cy &- (yi << 16)
                let p = base + (yi &* stride &+ xi)
                let top = Int(p[0]) &* (65536 &- ax) &+ Int(p[1]) &* ax
                let bottom = Int(p[stride]) &* (65536 &- ax) &+ Int(p[stride + 1]) &* ax
                buffer[k] = Double(top &* (65536 &- ay) &+ bottom &* ay) / (one * one)
                fx &+= dx
                fy &+= dy
            }
            initialized = count
        }
    }

    /// `count` samples from `start`, `step` apart, as `bilinear` gives them: by `lineSamples` where the whole line
    /// lies inside the image, else sample by sample.
    static func samples(_ image: LumaImage, from start: Point, step: Point, count: Int) -> [Double] {
        lineSamples(image, from: start, step: step, count: count, every: 1)
            ?? (0..<count).map { k in
                bilinear(image, start.x + step.x * Double(k), start.y + step.y * Double(k))
            }
    }

    static func luma(_ image: LumaImage, _ x: Double, _ y: Double) -> UInt8 {
        let xi = min(max(Int(x.rounded(.down)), 0), image.width - 1)
        let yi = min(max(Int(y.rounded(.down)), 0), image.height - 1)
        return image.base.load(fromByteOffset: yi * image.stride + xi, as: UInt8.self)
    }

    static func median(_ values: [Double]) -> Double {
        let s = values.sorted()
        return s[s.count / 2]
    }
}
