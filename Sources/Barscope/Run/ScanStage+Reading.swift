import CBarscope
import CGStreamer
import Foundation
import Synchronization

/// A frame's read: the whole scan area, or in tracked mode a search or the known codes followed where they should be.
extension ScanStage {
    /// A frame's codes; and, between searches, the known codes it lost in a cut (see `catchUp`) and the results of
    /// the search before it if that has published them (asked as this frame publishes its own).
    func read(_ luma: LumaImage, _ job: ScanPool.Job, _ region: PixelRect?, _ scanner: BarcodeReader)
        -> (found: [Detection], gone: [Detection], searchDone: [Detection]?)
    {
        let c = parts.configuration
        let mapping = CropMapping(region: region)
        guard c.tracked else {
            scanner.zbarScanner.setDensity(1)
            let found = scanner.read(luma, mapping: mapping, viewfinder: region, frame: job.frame)
            guard let known else { return (found, [], nil) }
            let all = scanner.withKnownCodes(
                known.recent(before: job.sequence), missingFrom: found, in: luma, mapping: mapping, viewfinder: region)
            return (all, [], nil)
        }
        if policy.isSearch(job.sequence) {
            let found = trackedSearch(luma, sequence: job.sequence, mapping: mapping, region: region, with: scanner)
            searches.publish(job.sequence, found, search: true)
            return (found, [], nil)
        }
        // Between searches: around where each known code should be now (moved by its velocity), from whatever
        // earlier frames the workers have finished.
        let expected = searches.predicted(for: job.sequence)
        let (found, cut) = follow(expected, in: luma, sequence: job.sequence, mapping: mapping, region: region, scanner)
        let searchBefore = policy.search(for: job.sequence)
        let done = searches.publish(job.sequence, found, search: false, resultOf: searchBefore)
        let gone = cut ? expected.map(\.detection) : []
        if cut { policy.cut(after: searchBefore) }
        // After a cut the whole picture changed: the next search, a frame to three later, reads all of it (more than
        // half of it changed), where each frame before it read a 16th, the most changed blocks, not where codes are.
        // At the RTSP bench clip's loop every stream of a service read those areas on the same frames, on top of the
        // cut's own rescans (docs/decisions.md, "Streams per machine").
        guard let changes, !policy.isAfterCut(searchBefore) else {
            return (found, gone, done)
        }
        // And where the picture changed since the search and nothing known explains it: a code that came into view
        // since is read now, not at the next search.
        // Explained: each code known, where it is now and was at the search, with the card or label it moves on
        // (seen: a demo card's edge 56 px beyond its code, changed on every frame): grown by half its smaller side.
        let since = job.sequence - searchBefore
        // (After a cut, where the codes were explains nothing: others may have come there.)
        let explained = (found.map { ($0, 0.0) } + (cut ? [] : expected).map { ($0.detection, $0.speed) }).map {
            d, speed in
            let b = d.bounds
            return Self.searched(
                d, mapping, grownBy: max(24, min(b.width, b.height) / 2) + Int((speed * Double(since)).rounded(.up)))
        }
        let areas = changes.unexplained(in: luma, explained: explained)
        guard !areas.isEmpty else { return (found, gone, done) }
        // As a search reads them, the full-size read for small 2D codes included (the areas are small).
        let (candidates, exact) = searchAreas(
            luma, areas, mapping: mapping, region: region, small2D: true, with: scanner)
        let new = confirm(candidates, exact, besides: found, luma, mapping: mapping, region: region, with: scanner)
        let latest = searches.publish(job.sequence, new, search: true, resultOf: searchBefore)
        return (found + new, gone, latest ?? done)
    }

    /// The known codes rescanned where they should be in frame `sequence`; at a cut (all lost at once:
    /// `TrackedRegions.rescanUnlessCut`) the board forgets them.
    func follow(
        _ expected: [Expected], in luma: LumaImage, sequence: Int, mapping: CropMapping, region: PixelRect?,
        _ scanner: BarcodeReader
    ) -> (found: [Detection], cut: Bool) {
        let result = TrackedRegions.rescanUnlessCut(
            luma, around: expected, mapping: mapping, viewfinder: region, with: scanner)
        if result.cut { searches.forget(expected.map(\.detection), before: sequence) }
        return result
    }
}
