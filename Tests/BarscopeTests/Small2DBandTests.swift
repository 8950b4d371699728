import TestSupport
import Testing

@testable import Barscope

/// Tracked mode's whole-frame read for small 2D codes runs a band of the frame at a time: the bands must cover the
/// frame, and every code up to 128 rows tall must lie wholly inside one of them (ZBar's QR stage reads a code only
/// when all of it is in the image it is given).
@Suite(.suiteLimit) struct Small2DBandTests {
    @Test(arguments: [1080, 1081, 720, 540, 480, 257, 200, 64])
    func everySmallCodeLiesWhollyInOneBand(height: Int) {
        let bands = (0..<4).map { SearchPolicy.small2DBand(height: height, turn: $0) }
        let distinct = Set(bands.map { "\($0.y) \($0.height)" })
        #expect(distinct.count <= 4)
        #expect(bands.allSatisfy { $0.y >= 0 && $0.height > 0 && $0.y + $0.height <= height })
        // Turn after turn, the same bands come round.
        #expect(SearchPolicy.small2DBand(height: height, turn: 4 * distinct.count + 1) == bands[1 % distinct.count])
        let tallest = min(height, 2 * SearchPolicy.small2DOverlap)
        for top in 0...(height - tallest) {
            #expect(
                bands.contains { $0.y <= top && top + tallest <= $0.y + $0.height },
                "rows \(top)..<\(top + tallest) of \(height) lie in no band: \(bands)")
        }
        // A band is a share of the frame and its overlaps, not the frame (past one band).
        if distinct.count > 1 {
            #expect(bands.allSatisfy { $0.height <= height / distinct.count + 2 * SearchPolicy.small2DOverlap + 1 })
        }
    }
}
