import Testing

@testable import Barscope

/// Tracked mode's decisions, without pixels or threads.
struct SearchPolicyTests {
    @Test func theFirstFrameSearchesThenEveryIntervalFromThePhase() {
        let p = SearchPolicy(interval: 4, phase: 2, small2DEvery: 16, gated: true)
        #expect((0..<12).map(p.search(for:)) == [0, 0, 2, 2, 2, 2, 6, 6, 6, 6, 10, 10])
        #expect((0..<8).filter(p.isSearch) == [0, 2, 6])
        #expect((0..<8).filter(p.isBetweenSearches) == [1, 3, 4, 5, 7])
        let everyFrame = SearchPolicy(interval: 1, small2DEvery: 16, gated: false)
        #expect((0..<5).allSatisfy(everyFrame.isSearch))
        #expect(!(0..<5).contains(where: everyFrame.isBetweenSearches))
    }

    @Test func smallTwoDCodesAreReadWhenDueAndWhileOneIsInView() {
        let p = SearchPolicy(interval: 4, small2DEvery: 3, gated: false)
        #expect((0..<7).map { _ in p.beginSearch().small2D } == [true, false, false, true, false, false, true])
        p.small2DRead(found: true)
        #expect((0..<3).map { _ in p.beginSearch().small2D } == [true, true, true])
        p.small2DRead(found: false)
        #expect(p.beginSearch() == (10, false))
    }

    @Test func aBandIsDueAtEveryOtherDueSearchAndTakenByOneThatReadsAreasOnly() {
        let p = SearchPolicy(interval: 4, small2DEvery: 2, gated: true)
        // Due at searches 2, 6, 10 (n % 4 == 2); search 2 read the whole frame: the band waits for search 3.
        #expect(p.band(forSearch: 0, areasOnly: true, height: 1080) == nil)
        #expect(p.band(forSearch: 2, areasOnly: false, height: 1080) == nil)
        let first = p.band(forSearch: 3, areasOnly: true, height: 1080)
        #expect(first.map { [$0.y, $0.height] } == [0, 334])
        #expect(p.band(forSearch: 4, areasOnly: true, height: 1080) == nil)
        let second = p.band(forSearch: 6, areasOnly: true, height: 1080)
        #expect(second.map { [$0.y, $0.height] } == [206, 398])
        // Without gated searches no band is read: every search reads the whole frame.
        let whole = SearchPolicy(interval: 4, small2DEvery: 2, gated: false)
        #expect((0..<8).compactMap { whole.band(forSearch: $0, areasOnly: true, height: 1080) }.isEmpty)
    }

    @Test func aCutIsRememberedForTheSearchBeforeIt() {
        let p = SearchPolicy(interval: 4, small2DEvery: 16, gated: true)
        #expect(!p.isAfterCut(0))
        p.cut(after: 8)
        #expect(p.isAfterCut(8) && !p.isAfterCut(4) && !p.isAfterCut(12))
    }
}
