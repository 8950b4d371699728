import Barscope
import TestSupport
import Testing

/// The half-size image every tracked search and the stills' second pass scan: each output pixel the rounded mean
/// of its 2x2 block, at every width (the vector loop's eight-pixel steps and the tail after them), with row padding.
@Suite(.suiteLimit) struct LumaImageTests {
    @Test(arguments: [(2, 2), (16, 4), (17, 5), (38, 7), (1920, 6), (33, 9)])
    func halvingAveragesEachBlock(size: (width: Int, height: Int)) {
        let stride = size.width + 13
        var state: UInt32 = 0x9E37_79B9
        let pixels = (0..<(stride * size.height)).map { _ -> UInt8 in
            state ^= state << 13
            state ^= state >> 17
            state ^= state << 5
            return UInt8(truncatingIfNeeded: state)
        }
        let w = size.width / 2
        let h = size.height / 2
        var out = [UInt8](repeating: 0, count: w * h)
        pixels.withUnsafeBytes { raw in
            let image = LumaImage(base: raw.baseAddress!, width: size.width, height: size.height, stride: stride)
            out.withUnsafeMutableBufferPointer { image.halve(into: $0.baseAddress!) }
        }
        var wrong = 0
        for y in 0..<h {
            for x in 0..<w {
                let p = { (dx: Int, dy: Int) in Int(pixels[(2 * y + dy) * stride + 2 * x + dx]) }
                let mean = (p(0, 0) + p(1, 0) + p(0, 1) + p(1, 1) + 2) / 4
                if Int(out[y * w + x]) != mean { wrong += 1 }
            }
        }
        #expect(wrong == 0, "\(wrong) of \(w * h) pixels differ from their block's mean")
    }
}
