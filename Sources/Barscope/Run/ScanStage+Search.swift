import CBarscope
import CGStreamer
import Foundation
import Synchronization

/// Tracked mode's search: changed areas read on sparse lines and at half size; candidates read again at full size.
extension ScanStage {
    /// Tracked mode's search: every code in the frame, whatever its size, for as little work as that takes. It reads
    /// the areas that changed since the search before (`ChangedAreas`; the whole frame at every n-th search) and
    /// rescans the codes known before where they should be now:
    /// - 1D codes at full resolution along every `trackedSearchLines`-th row and column (a 1D code of 1-pixel
    ///   modules is crossed by dozens of such lines; ZBar's QR stage, which binarizes the whole image once it finds
    ///   finder patterns, stays off);
    /// - 2D codes at half size (a quarter of the pixels: modules of 2 px and more);
    /// - 2D codes at full size on what half size did not explain: a copy with the 2D codes half size found painted
    ///   over, so that ZBar's QR stage only runs when there is a code half size missed (a small one).
    /// Each code found by the sparse lines or at half size is read again at full size in its own small region, for
    /// its exact box and text.
    func trackedSearch(
        _ luma: LumaImage, sequence: Int, mapping: CropMapping, region: PixelRect?, with scanner: BarcodeReader
    ) -> [Detection] {
        let zbar = scanner.zbarScanner
        defer {
            zbar.setKinds(.all)
            zbar.setDensity(1)
        }
        let (n, small2D) = policy.beginSearch()
        // The codes known before, where they should be now, first: what they explain is not searched again.
        var known: [Detection] = []
        if changes != nil {
            known =
                follow(
                    searches.predicted(for: sequence, waiting: false), in: luma, sequence: sequence, mapping: mapping,
                    region: region, scanner
                ).found
        }
        let areas = changes?.areas(in: luma, known: knownAreas(known, mapping))
        // The whole frame's small-2D read costs more than the rest of a whole search, and a stream's search that
        // took both held a worker long enough for the other streams' frames to be dropped (docs/decisions.md, the
        // bands): after the first search it runs on the changed areas only, and on one band of the frame at
        // a gated search (below). (Every search whole, `trackedWholeSearchEvery` 1, keeps the whole-frame read: no
        // search is gated. A frame that changed size mid-stream is searched whole without it; its bands follow.)
        let wholeSmall2D = areas == nil && (n == 0 || changes == nil)
        let small2DOnAreas = small2D && (areas != nil || wholeSmall2D)
        let searched = areas ?? [PixelRect(x: 0, y: 0, width: luma.width, height: luma.height)]
        var (candidates, exact) = searchAreas(
            luma, searched, mapping: mapping, region: region, small2D: small2DOnAreas, with: scanner)
        let band = policy.band(forSearch: n, areasOnly: areas != nil, height: luma.height)
        if let band {
            // Codes that stand still where nothing changes are read one band at a time, at every other due search
            // or the first gated search after it (the whole frame in about 8 x trackedSmall2DEvery searches, 128
            // frames by default); the codes already found are painted over.
            let offset = CropMapping(offsetX: mapping.offsetX, offsetY: mapping.offsetY + band.y)
            let rows = PixelRect(x: 0, y: band.y, width: luma.width, height: band.height)
            let painted = (known + exact + candidates).map { d in
                let b = d.bounds
                return Bounds(x: b.x - offset.offsetX, y: b.y - offset.offsetY, width: b.width, height: b.height)
            }
            zbar.setKinds(.matrix)
            zbar.setDensity(1)
            if let part = luma.cropped(to: rows) {
                exact += scanner.readPaintedOver(part, paintedOver: painted, mapping: offset, viewfinder: region)
            }
        }
        // (Only when a full-size 2D read ran: a whole search after the first reads none.)
        if small2DOnAreas || band != nil { policy.small2DRead(found: !exact.isEmpty) }
        zbar.setKinds(.all)
        let new = confirm(candidates, exact, besides: known, luma, mapping: mapping, region: region, with: scanner)
        // A search that found nothing at all reads what it searched again as a frame where nothing is read is read
        // in every-frame mode (`BarcodeReader.readAgain`: half size for every kind of code, plain, stretched and
        // binarized); its reads are kept as they are (a full-size rescan is what missed them). (Not where other
        // codes were found: the areas around them changed too, and would be read again at every search.)
        guard known.isEmpty, new.isEmpty else { return known + new }
        return again(luma, searched, mapping: mapping, region: region, with: scanner)
    }

    /// A search's reads of `areas` (the image's pixels): the candidates and the small 2D codes read at full size
    /// (`searchCandidates`, with `small2D`), in full-frame pixels. Leaves ZBar reading every kind, on every line.
    func searchAreas(
        _ luma: LumaImage, _ areas: [PixelRect], mapping: CropMapping, region: PixelRect?, small2D: Bool,
        with scanner: BarcodeReader
    ) -> (candidates: [Detection], exact: [Detection]) {
        defer {
            scanner.zbarScanner.setKinds(.all)
            scanner.zbarScanner.setDensity(1)
        }
        var candidates: [Detection] = []
        var exact: [Detection] = []
        for area in areas {
            guard let part = luma.cropped(to: area) else { continue }
            let offset = CropMapping(offsetX: mapping.offsetX + area.x, offsetY: mapping.offsetY + area.y)
            let (c, e) = searchCandidates(part, mapping: offset, region: region, small2D: small2D, with: scanner)
            candidates += c
            exact += e
        }
        return (candidates, exact)
    }

    /// `areas` (the image's pixels) read again as a frame where nothing is read is, in full-frame pixels.
    private func again(
        _ luma: LumaImage, _ areas: [PixelRect], mapping: CropMapping, region: PixelRect?, with scanner: BarcodeReader
    ) -> [Detection] {
        areas.flatMap { area -> [Detection] in
            guard let part = luma.cropped(to: area) else { return [] }
            let offset = CropMapping(offsetX: mapping.offsetX + area.x, offsetY: mapping.offsetY + area.y)
            return scanner.readAgain(part, mapping: offset, viewfinder: region)
        }
    }

    /// The codes a search found besides those in `known`: the exact reads, and each candidate read again at full
    /// size in a tight region (placed to a line spacing or two; none for a code already read).
    func confirm(
        _ candidates: [Detection], _ exact: [Detection], besides known: [Detection], _ luma: LumaImage,
        mapping: CropMapping, region: PixelRect?, with scanner: BarcodeReader
    ) -> [Detection] {
        var found = known
        func isFound(_ d: Detection) -> Bool {
            found.contains { $0.type == d.type && $0.data == d.data && $0.bounds.intersects(d.bounds) }
        }
        for d in exact where !isFound(d) { found.append(d) }
        let around = candidates.filter { !isFound($0) }.map {
            Expected(detection: $0, hasVelocity: true, framesSince: 0, speed: 2)
        }
        for d in TrackedRegions.rescan(luma, around: around, mapping: mapping, viewfinder: region, with: scanner)
        where !isFound(d) {
            found.append(d)
        }
        for c in candidates where !isFound(c) && !ZBarScanner.isTwoDimensional(name: c.type) {
            if let d = Self.readAlong(c, in: luma, mapping: mapping, region: region, with: scanner) { found.append(d) }
        }
        return Array(found.dropFirst(known.count))
    }

    /// A 1D candidate its rescan did not read again: read once more on every line of a region stretched along the
    /// scan by the candidate's own length each way, its text only. The sparse lines can give a box of a part of the
    /// code (an EAN whose halves were read on different lines: seen boxed 201 px long on a 340-px code), and a
    /// region around that part holds no whole code to read.
    static func readAlong(
        _ c: Detection, in luma: LumaImage, mapping: CropMapping, region: PixelRect?, with scanner: BarcodeReader
    ) -> Detection? {
        let b = c.bounds
        let alongRows = abs(c.acrossBars?.x ?? 1) >= abs(c.acrossBars?.y ?? 0)
        let (dx, dy) = alongRows ? (b.width, 8) : (8, b.height)
        let area = PixelRect(
            x: b.x - mapping.offsetX - dx, y: b.y - mapping.offsetY - dy, width: b.width + 2 * dx,
            height: b.height + 2 * dy)
        guard let part = luma.cropped(to: area) else { return nil }
        let offset = CropMapping(offsetX: mapping.offsetX + max(0, area.x), offsetY: mapping.offsetY + max(0, area.y))
        let zbar = scanner.zbarScanner
        let reads = zbar.scanning(.linear, rows: alongRows ? 1 : 0, columns: alongRows ? 0 : 1) {
            scanner.read(part, mapping: offset, viewfinder: nil, readAgainIfEmpty: false)
        }
        return TrackedRegions.judged(reads, by: region).first { $0.type == c.type && $0.data == c.data }
    }

    /// Where the codes read are in the searched image's pixels, with their quiet zones (10 modules of a 1D code,
    /// 4 of a QR code's: an eighth of the code's length, and a few pixels, covers them).
    private func knownAreas(_ known: [Detection], _ mapping: CropMapping) -> [PixelRect] {
        known.map { d in Self.searched(d, mapping, grownBy: max(d.bounds.width, d.bounds.height) / 8 + 4) }
    }

    /// A code's bounds in the searched image's pixels, grown by `grow` on every side.
    static func searched(_ d: Detection, _ mapping: CropMapping, grownBy grow: Int) -> PixelRect {
        let b = d.bounds
        return PixelRect(
            x: b.x - mapping.offsetX - grow, y: b.y - mapping.offsetY - grow, width: b.width + 2 * grow,
            height: b.height + 2 * grow)
    }

    /// One area's reads for a search: the candidates (1D codes along sparse lines and 2D codes at half size, in
    /// full-frame pixels, to be read again at full size) and the small 2D codes read at full size (`small2D`).
    private func searchCandidates(
        _ luma: LumaImage, mapping: CropMapping, region: PixelRect?, small2D: Bool, with scanner: BarcodeReader
    ) -> (candidates: [Detection], exact: [Detection]) {
        let zbar = scanner.zbarScanner
        zbar.setKinds(.linear)
        zbar.setDensity(max(1, parts.configuration.trackedSearchLines))
        var coarse = scanner.read(luma, mapping: mapping, viewfinder: nil, readAgainIfEmpty: false)
        zbar.setKinds(.matrix)
        zbar.setDensity(1)
        let half = scanner.readHalved(luma)
        // (ZBar's kinds are `.matrix` here: the full-size read is for 2D codes only.)
        let exact =
            small2D
            ? scanner.readPaintedOver(luma, paintedOver: half.map(\.bounds), mapping: mapping, viewfinder: region) : []
        coarse += half.map { d in
            var d = d
            d.polygon = d.polygon.map(mapping.toFrame)
            d.bounds = Bounds(enclosing: d.polygon)
            return d
        }
        return (coarse, exact)
    }
}
