import Foundation
import TestSupport
import Testing

@testable import Barscope

/// The hard-code reader's search for bars, on made images (`HardCodeTests` reads real clips with it).
@Suite(.suiteLimit) struct HardCodeReaderTests {
    /// A 1080p frame of sharp vertical stripes, 2 px black and 2 px white: every cell strong and all one way.
    /// The region is the whole frame, its tensor sums far past Int32 (they used to trap); stripes of one width
    /// read as no code.
    @Test func aFrameOfStripesIsOneRegionAndNoCode() {
        let width = 1920
        let height = 1080
        var pixels = [UInt8](repeating: 0, count: width * height)
        for y in 0..<height { for x in 0..<width where x % 4 >= 2 { pixels[y * width + x] = 255 } }
        let reader = HardCodeReader(settings: ScannerSettings())
        pixels.withUnsafeBytes { raw in
            let image = LumaImage(base: raw.baseAddress!, width: width, height: height, stride: width)
            let regions = reader.findBars(in: image)
            #expect(regions.count == 1, "\(regions.count) regions")
            if let r = regions.first {
                // Across the bars is along x; the region spans the frame.
                #expect(abs(r.across.x) > 0.999, "across \(r.across)")
                #expect(2 * r.halfLength > 1800 && 2 * r.halfHeight > 1000, "\(r)")
            }
            #expect(reader.read(image, excluding: []).isEmpty)
        }
    }

    /// A flat frame with noise has no region: the bar is set by the frame's own texture.
    @Test func noiseAloneIsNoRegion() {
        let width = 640
        let height = 360
        var rng = SplitMix64(seed: 7)
        let pixels = (0..<(width * height)).map { _ in UInt8(120 + Int(6 * rng.unit())) }
        let reader = HardCodeReader(settings: ScannerSettings())
        pixels.withUnsafeBytes { raw in
            let image = LumaImage(base: raw.baseAddress!, width: width, height: height, stride: width)
            #expect(reader.findBars(in: image).isEmpty)
        }
    }
}
