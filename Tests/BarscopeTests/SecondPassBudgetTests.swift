import Foundation
import TestSupport
import Testing

@testable import Barscope

/// The still-image second passes end on a count of pixels, not on the clock: the same image gets the same passes,
/// the same work and the same reads on any machine, however busy.
@Suite(.suiteLimit) struct SecondPassBudgetTests {
    /// A 300 × 200 picture with nothing to read: every pass is tried.
    static let blank = AccuracyTests.Picture(
        pixels: (0..<(300 * 200)).map { UInt8(truncatingIfNeeded: ($0 * 7919) % 251) }, width: 300, height: 200)

    @Test func eachPassCountsThePixelsItMakes() {
        Self.blank.with { luma in
            for pass in SecondPass.order(for: luma) {
                let predicted = pass.outputSize(width: luma.width, height: luma.height)
                let made = pass.apply(to: luma)
                #expect(predicted.width == made.width && predicted.height == made.height, "\(pass.steps)")
            }
        }
    }

    @Test func anImageWithNothingGetsEveryPassAndTheSameWorkEachTime() throws {
        let reader = BarcodeReader(engine: .both, thorough: true)
        let all = Self.blank.with { luma in
            SecondPass.order(for: luma).map { p in p.outputSize(width: 300, height: 200) }.reduce(0) {
                $0 + $1.width * $1.height
            }
        }
        #expect(Self.blank.with { reader.read($0) }.isEmpty)
        let work = try #require(reader.lastSecondPasses)
        #expect(work == SecondPassWork(passes: 23, pixels: all, skipped: 0, stop: .exhausted), "\(work)")
        #expect(work.pixels <= reader.secondPassBudget.pixels)
        // Four readers at once on two cores: each runs slower, and does exactly the same work.
        let results = Locked<[SecondPassWork?]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let r = BarcodeReader(engine: .both, thorough: true)
            _ = Self.blank.with { r.read($0) }
            results.withLock { $0.append(r.lastSecondPasses) }
        }
        #expect(results.load() == Array(repeating: work, count: 4))
    }

    @Test func theBudgetNotTheClockDecidesWhatIsRead() throws {
        // Light bars on dark: ZBar's first read and its passes up to the inverted one (the tenth) miss it; that one
        // reads it.
        let picture = AccuracyTests.Picture(try Code128.symbol("INVERTED-42"), module: 3, dark: 255, light: 0)
        let passes = picture.with { SecondPass.order(for: $0) }
        let invert = try #require(passes.firstIndex(of: SecondPass(steps: [.inverted])))
        let upToInvert = passes[...invert].map { $0.outputSize(width: picture.width, height: picture.height) }
            .reduce(0) { $0 + $1.width * $1.height }
        let reader = BarcodeReader(engine: .zbar, thorough: true)
        #expect(picture.with { reader.read($0) }.map(\.data) == ["INVERTED-42"])
        #expect(
            reader.lastSecondPasses
                == SecondPassWork(passes: invert + 1, pixels: upToInvert, skipped: 0, stop: .found))
        // A budget one pixel short of that: the inverted pass is skipped, and so is the code, on any machine. Of
        // the passes after it only the half-size binarized one is small enough to fit (and reads nothing).
        let short = BarcodeReader(engine: .zbar, thorough: true)
        short.secondPassBudget.pixels = upToInvert - 1
        #expect(picture.with { short.read($0) }.isEmpty)
        let halfBinarized = SecondPass(steps: [.scaled(0.5), .binarized])
        let quarter = halfBinarized.outputSize(width: picture.width, height: picture.height)
        let expected = SecondPassWork(
            passes: invert + 1, pixels: upToInvert - picture.width * picture.height + quarter.width * quarter.height,
            skipped: passes.count - invert - 1, stop: .budget)
        #expect(short.lastSecondPasses == expected)
        #expect(expected.pixels <= upToInvert - 1)
        // The guard is the only clock: spent before the first pass, nothing is tried, and the work says why.
        let hurried = BarcodeReader(engine: .zbar, thorough: true)
        hurried.secondPassBudget.guardTime = .zero
        #expect(picture.with { hurried.read($0) }.isEmpty)
        #expect(hurried.lastSecondPasses == SecondPassWork(passes: 0, pixels: 0, skipped: 0, stop: .guardTime))
    }
}
