import Foundation

/// The decoding stage shared by stills and video: ZBar, zxing-cpp or both on one luma image, merged into one list
/// in one naming. Not thread-safe (it owns a ZBar scanner): one per worker.
public final class BarcodeReader {
    public let engine: Engine
    private let zbar: ZBarScanner
    /// zxing-cpp as this reader set it up (its formats and naming); the known codes' third look and the second
    /// opinions (other files) read with it too.
    let zxing: ZXingReader
    /// zxing-cpp for EAN and UPC only, trying hard (many more rows, both ways, and turned): the second decoder that
    /// judges ZBar's EAN and UPC reads (`secondOpinions`).
    let retailCheck: ZXingReader
    private let thorough: Bool
    /// The reader of 1D codes too hard for ZBar (nil: off).
    private let hard: HardCodeReader?
    /// `readHalved`'s image, kept from one call to the next (no allocation per frame).
    private var halfBuffer: [UInt8] = []
    /// `emptyImageReads`' stretched or binarized half-size image, and the sums binarizing takes, kept likewise.
    private var passBuffer: [UInt8] = []
    private var integralBuffer: [UInt32] = []
    /// `retailReads`' half-size band, kept likewise.
    var checkBuffer: [UInt8] = []
    /// `readPaintedOver`'s copy, kept likewise.
    private var paintedBuffer: [UInt8] = []
    /// How much work the second passes may do on one image: a count of pixels, so that every machine reads the
    /// same codes, with a wall-clock guard that a working machine never reaches.
    public var secondPassBudget = SecondPassBudget()
    /// What the second passes did on the last image read (nil when it got none: found at once, or not thorough).
    public private(set) var lastSecondPasses: SecondPassWork? = nil
    /// EAN and UPC reads since the last `takeDisputes` where zxing-cpp read another text of the code in the same
    /// place (`secondOpinions`): votes against that text there, for the tracker.
    var disputes: [Detection] = []

    /// - Parameters:
    ///   - settings: `-S` values; they choose the formats of both engines.
    ///   - thorough: for stills: zxing-cpp also tries its rotations and inversions, and an image where nothing is
    ///     found gets the second passes (scaled, rotated, stretched, inverted, binarized, sharpened) in turn.
    ///   - hardCodes: where the image has bars no read explains, read them again as one profile averaged along
    ///     them (`HardCodeReader`): 1D codes too faint, small or blurred for ZBar. Not in 2D-only reads.
    public convenience init(
        engine: Engine = .zbar, settings: ScannerSettings = ScannerSettings(), thorough: Bool = false,
        hardCodes: Bool = false
    ) {
        self.init(engine: engine, settings: settings, thorough: thorough, hardCodes: hardCodes, hardCodeMemory: nil)
    }

    /// A reader of one stream's frames: with `hardCodeMemory` (the stream's, shared by its readers), each hard
    /// code's profile is averaged over the frames before (`read`'s `frame` says which one this is).
    init(engine: Engine, settings: ScannerSettings, thorough: Bool, hardCodes: Bool, hardCodeMemory: HardCodeMemory?) {
        self.engine = engine
        self.thorough = thorough
        hard = hardCodes ? HardCodeReader(settings: settings, memory: hardCodeMemory) : nil
        zbar = ZBarScanner(settings: settings)
        zxing = ZXingReader(
            formats: settings.zxingFormats, tryHarder: thorough, upcAAsEAN13: !settings.reportsUPCA,
            upcEAsEAN13: !settings.reportsUPCE, isbn10: settings.reportsISBN10, isbn13: settings.reportsISBN13)
        var check = zxing
        check.formats &= ZXingReader.retailFormats
        check.tryHarder = true
        retailCheck = check
    }

    /// The ZBar scanner, for callers that tune its densities (the tracked mode).
    public var zbarScanner: ZBarScanner { zbar }

    /// Reads one luma image (a frame, or the viewfinder's crop of one).
    /// - Parameters:
    ///   - mapping: crop → full frame; every point comes back in full-frame pixels.
    ///   - viewfinder: the region the image was cropped to, if any: judges `inViewfinder`, and 1D reads that run
    ///     into its edge are dropped (a code cut by the crop can read as a shorter valid code).
    ///   - frame: the image's number in its stream, for a reader with a hard-code memory.
    ///   - readAgainIfEmpty: an image where nothing is read is read again at half size, plain, stretched and binarized
    ///     (`emptyImageReads`), as a still's second passes do; tracked mode's reads of a part of the frame, which
    ///     its searches read halved, say no.
    public func read(
        _ image: LumaImage, mapping: CropMapping = CropMapping(), viewfinder: PixelRect? = nil, frame: Int? = nil,
        readAgainIfEmpty: Bool = true
    ) -> [Detection] {
        zbar.readingOneImage {
            readImage(image, mapping: mapping, viewfinder: viewfinder, frame: frame, readAgainIfEmpty: readAgainIfEmpty)
        }
    }

    private func readImage(
        _ image: LumaImage, mapping: CropMapping, viewfinder: PixelRect?, frame: Int?, readAgainIfEmpty: Bool
    ) -> [Detection] {
        let cropped = viewfinder != nil
        let disputedBefore = keepingFewDisputes()
        defer { placeDisputes(from: disputedBefore) { mapping.toFrame($0) } }
        var found = readOnce(image).filter { Plausibility.accepts($0, in: image, cropped: cropped) }
        if found.isEmpty, readAgainIfEmpty, !thorough { found = emptyImageReads(of: image, cropped: cropped) }
        if let hard, zbar.kinds != .matrix {
            found += hard.read(
                image, excluding: found, frame: frame, origin: Point(Double(mapping.offsetX), Double(mapping.offsetY))
            ).filter {
                Plausibility.accepts($0, in: image, cropped: cropped)
            }
        }
        lastSecondPasses = nil
        if thorough && found.isEmpty {
            var work = SecondPassWork()
            let deadline = ContinuousClock.now + secondPassBudget.guardTime
            for pass in SecondPass.order(for: image) {
                // In order, until one finds a code; a pass whose image would take the pixels past the budget is
                // skipped (a smaller one after it may still fit): the same passes on every machine. The clock
                // only guards against a machine far slower than any in use.
                let size = pass.outputSize(width: image.width, height: image.height)
                guard work.pixels + size.width * size.height <= secondPassBudget.pixels else {
                    work.skipped += 1
                    continue
                }
                guard ContinuousClock.now < deadline else {
                    work.stop = .guardTime
                    break
                }
                found = read(pass, of: image, cropped: cropped, work: &work)
                if !found.isEmpty {
                    work.stop = .found
                    break
                }
            }
            if work.stop == .exhausted && work.skipped > 0 { work.stop = .budget }
            lastSecondPasses = work
        }
        return Self.placed(found, mapping: mapping, viewfinder: viewfinder)
    }

    /// An image's reads in full-frame pixels, judged by the viewfinder.
    private static func placed(_ found: [Detection], mapping: CropMapping, viewfinder: PixelRect?) -> [Detection] {
        found.map { d in
            var placed = d
            placed.polygon = d.polygon.map(mapping.toFrame)
            placed.bounds = Bounds(enclosing: placed.polygon)
            placed.inViewfinder = viewfinder.map { $0.contains(all: placed.polygon) } ?? true
            return placed
        }
    }

    /// The look `read` gives an image where nothing is read (`emptyImageReads`: half size, plain, stretched and
    /// binarized), alone: for a tracked search's area where its own reads (sparse lines, half size for 2D codes)
    /// found nothing. Reads every kind of code on every line, whatever ZBar was set to.
    func readAgain(_ image: LumaImage, mapping: CropMapping, viewfinder: PixelRect?) -> [Detection] {
        let found = zbar.scanning(.all, rows: 1, columns: 1) {
            zbar.readingOneImage {
                let disputedBefore = keepingFewDisputes()
                defer { placeDisputes(from: disputedBefore) { mapping.toFrame($0) } }
                return emptyImageReads(of: image, cropped: viewfinder != nil)
            }
        }
        return Self.placed(found, mapping: mapping, viewfinder: viewfinder)
    }

    /// One second pass: its image made, read, the reads' points mapped back to `image`, the work counted.
    func read(_ pass: SecondPass, of image: LumaImage, cropped: Bool, work: inout SecondPassWork) -> [Detection] {
        let t = pass.apply(to: image)
        work.passes += 1
        work.pixels += t.width * t.height
        return t.withImage { readOnce($0) }.map { d in
            var back = d
            back.polygon = d.polygon.map(t.toSource)
            back.bounds = Bounds(enclosing: back.polygon)
            return back
        }.filter { Plausibility.accepts($0, in: image, cropped: cropped) }
    }

    /// Reads the image at half its size (each 2x2 block averaged into a buffer this reader keeps): a quarter of
    /// the pixels for a search that only has to find codes, not box them exactly. Points come back in the image's
    /// own pixels (doubled); codes with modules under two pixels may be missed.
    public func readHalved(_ image: LumaImage) -> [Detection] {
        atHalfSize(image) { readOnce($0) } ?? readOnce(image)
    }

    /// Lends `image` at half size (each 2x2 block averaged into a buffer this reader keeps) to `read`, and brings
    /// its reads, and the disputes it made, back to `image`'s pixels; nil for an image too small to halve.
    private func atHalfSize(_ image: LumaImage, _ read: (LumaImage) -> [Detection]) -> [Detection]? {
        let w = image.width / 2
        let h = image.height / 2
        guard w >= 8, h >= 8 else { return nil }
        if halfBuffer.count < w * h { halfBuffer = [UInt8](repeating: 0, count: w * h) }
        // (`LumaImage.halve` averages each 2x2 block: a half-size pixel's centre is 2x + 0.5 at full size.)
        let toImage = { (p: Point) in Point(p.x * 2 + 0.5, p.y * 2 + 0.5) }
        let disputedBefore = keepingFewDisputes()
        defer { placeDisputes(from: disputedBefore, toImage) }
        let found = halfBuffer.withUnsafeMutableBufferPointer { out -> [Detection] in
            image.halve(into: out.baseAddress!)
            return read(LumaImage(base: UnsafeRawPointer(out.baseAddress!), width: w, height: h, stride: w))
        }
        return found.map { d in
            var full = d
            full.polygon = d.polygon.map(toImage)
            full.bounds = Bounds(enclosing: full.polygon)
            full.lengthAcrossBars = d.lengthAcrossBars.map { $0 * 2 }
            return full
        }
    }

    /// An image where the full-size read found nothing, read at half size, then at half size stretched
    /// (`TransformedLuma.stretch`: grey bars on a grey label), then at half size binarized against its local mean:
    /// the cheapest of a still's second passes that read real photos' codes in motion (each a quarter of the
    /// pixels). ZBar finds a bar's edge by the step in brightness from one pixel to the next: the soft edges
    /// of a print enlarged past its sharpness (a photo's code scaled up, a close camera's focus) spread each edge
    /// over pixels whose steps are too small for it, and halved each step is twice as large (seen: a UPC-E that no
    /// line reads at 1280x720 read on 20 lines at 640x360); glare, shading and a faded print flatten the bars'
    /// contrast, which the local mean restores. An EAN or UPC read there counts only when zxing-cpp reads the same
    /// text (`secondOpinions`): its one decimal check digit passes one misread in ten, and a print ZBar misreads as
    /// a still (upca-2_38 of the real-photo set) it misreads at every size where it reads it at all. Points in
    /// `image`'s pixels; only the reads `Plausibility` accepts there.
    private func emptyImageReads(of image: LumaImage, cropped: Bool) -> [Detection] {
        func checked(_ reads: [Detection]) -> [Detection] {
            reads.filter { !(Self.retail.contains($0.type) && $0.engine == "zbar") }
        }
        return atHalfSize(image) { half in
            let plain = checked(readOnce(half))
            guard plain.isEmpty else { return plain }
            if passBuffer.count < half.width * half.height {
                passBuffer = [UInt8](repeating: 0, count: half.width * half.height)
            }
            // The half image made into another in the kept buffer, and read.
            func readMade(_ make: (UnsafeMutablePointer<UInt8>) -> Void) -> [Detection] {
                passBuffer.withUnsafeMutableBufferPointer { out in
                    make(out.baseAddress!)
                    return checked(
                        readOnce(
                            LumaImage(
                                base: UnsafeRawPointer(out.baseAddress!), width: half.width, height: half.height,
                                stride: half.width)))
                }
            }
            let stretched = readMade { TransformedLuma.stretch(half, into: $0) }
            guard stretched.isEmpty else { return stretched }
            return readMade { TransformedLuma.binarize(half, into: $0, integral: &integralBuffer) }
        }?.filter { Plausibility.accepts($0, in: image, cropped: cropped) } ?? []
    }

    /// Reads a copy of the image with `paintedOver` (the image's pixels: codes already found) painted white, each
    /// grown by a quarter of its smaller side (at least 8 px) for its quiet zone: tracked mode's full-size read for
    /// 2D codes too small for half size, so that ZBar's QR stage, which binarizes the whole image once it sees
    /// finder patterns, runs only when there is a code left to find. The copy is kept from one call to the next.
    func readPaintedOver(
        _ image: LumaImage, paintedOver: [Bounds], mapping: CropMapping, viewfinder: PixelRect?
    ) -> [Detection] {
        image.compactCopy(into: &paintedBuffer) { copy, pixels in
            for b in paintedOver {
                let grow = max(8, min(b.width, b.height) / 4)
                let x0 = max(0, b.x - grow)
                let x1 = min(copy.width, b.x + b.width + grow)
                let y0 = max(0, b.y - grow)
                let y1 = min(copy.height, b.y + b.height + grow)
                guard x1 > x0, y1 > y0 else { continue }
                for y in y0..<y1 { (pixels + y * copy.width + x0).update(repeating: 255, count: x1 - x0) }
            }
            return read(copy, mapping: mapping, viewfinder: viewfinder, readAgainIfEmpty: false)
        }
    }

    /// One read by the chosen engines, in the image's own pixels.
    private func readOnce(_ image: LumaImage) -> [Detection] {
        switch engine {
        case .zbar:
            return withSequences(
                secondOpinions(zbar.scan(image), in: image), in: image)
        case .zxing: return zxing.read(image)
        case .both:
            // Stills (thorough) believe zxing-cpp where the engines differ: measured on the real-photo set, where it
            // misreads least. Video frames do not (see `confirms`).
            let merged = Self.merge(zbar: zbar.scan(image), zxing: zxing.read(image)) { z, x in
                self.thorough || self.confirms(x.data, over: z.data, near: z.bounds, in: image)
            }
            let kept = verified(merged, in: image).compactMap { d -> Detection? in
                // A 1D code only zxing-cpp read: the union must not add its misreads (on small, blurred codes it
                // reads a wrong EAN or UPC with a right check digit now and then). ZBar looks again at twice the
                // size: the same text confirms it, a different one drops it. Where ZBar reads nothing there even
                // so, zxing-cpp's read stands only if zxing-cpp reads the same again at twice the size (a misread
                // seldom survives a resampling).
                guard !thorough, d.engine == "zxing", !ZBarScanner.isTwoDimensional(name: d.type) else { return d }
                // A part of a tilted I2/5, CODE-39 or Codabar, read as a shorter code on a line that leaves it
                // through its bars' ends: the code goes on past the read on a line beside it. (ZBar at twice the
                // size reads such parts too, so it cannot confirm them.)
                if ZBarScanner.partsReadAsCodes(name: d.type), Self.readsPart(d, in: image) { return nil }
                let closer = zbarCloser(near: d.bounds, in: image).filter { $0.type == d.type }
                if closer.contains(where: { $0.data == d.data }) {
                    var confirmed = d
                    confirmed.engine = "both"
                    return confirmed
                }
                guard closer.isEmpty else { return nil }
                let margin = max(d.bounds.width, d.bounds.height) / 4 + 8
                guard let region = image.cropped(to: d.bounds.expanded(by: margin)) else { return nil }
                let again = TransformedLuma.scaled(region, by: 2).withImage { zxing.read($0) }
                return again.contains(where: { $0.type == d.type && $0.data == d.data }) ? d : nil
            }
            return withSequences(kept, in: image)
        }
    }

    /// Whether a 1D read is a part of a longer code: its outline, fitted to zxing-cpp's scan lines (its polygon: its
    /// first line from the first corner to the last, its last line between the middle two), has bars going on past
    /// one of its ends within less than a quiet zone.
    static func readsPart(_ d: Detection, in image: LumaImage) -> Bool {
        let modules = Plausibility.minimumModules(type: d.type, data: d.data)
        guard let outline = BarOutline.estimate(reads: scanLines(of: d.polygon), modules: modules, in: image) else {
            return false
        }
        return outline.goesOnPast
    }

    /// zxing-cpp's scan lines of a 1D read, each from its first bar to its last: the first from its polygon's first
    /// corner to its last, the last between the middle two (one line when they are the same).
    static func scanLines(of polygon: [Point]) -> [(Point, Point)] {
        guard polygon.count == 4 else { return polygon.count == 2 ? [(polygon[0], polygon[1])] : [] }
        let (first, last) = ((polygon[0], polygon[3]), (polygon[1], polygon[2]))
        return first == last ? [first] : [first, last]
    }

    /// A part of a structured append that ZBar read and no engine placed (ZBar keeps the header to itself, and
    /// knows the order only when it saw every part) is read again by zxing-cpp on its own region, for its index,
    /// count and parity. Rare (only such parts), and a small region.
    private func withSequences(_ reads: [Detection], in image: LumaImage) -> [Detection] {
        reads.map { d in
            guard d.sequencePart, d.sequence?.id == nil else { return d }
            let margin = max(d.bounds.width, d.bounds.height) / 4 + 8
            guard let region = image.cropped(to: d.bounds.expanded(by: margin)) else { return d }
            guard let header = zxing.read(region).first(where: { $0.data == d.data && $0.sequence != nil })?.sequence
            else { return d }
            var placed = d
            placed.sequence = header
            return placed
        }
    }

    /// ZBar's reads of a region around `area` at twice its size (points in the region's scaled pixels: only the
    /// texts are used).
    private func zbarCloser(near area: PixelRect, in image: LumaImage) -> [Detection] {
        let margin = max(area.width, area.height) / 4 + 8
        guard let region = image.cropped(to: area.expanded(by: margin)) else { return [] }
        return TransformedLuma.scaled(region, by: 2).withImage { zbar.scan($0) }
    }

    /// Whether ZBar, looking again at the region of a 1D code at twice its size, reads `other` there and not
    /// `mine`: the two engines read different texts in one place, so one of them misread. On video neither is
    /// believed on its word (on small, blurred codes zxing-cpp misreads EAN-13 digits as often as ZBar does, and
    /// without try-harder more often: measured with `scripts/recall.py`); the other engine's text replaces ZBar's
    /// only when ZBar itself, with more pixels a module, agrees with it, so two engines never read less than ZBar
    /// alone.
    private func confirms(_ other: String, over mine: String, near area: PixelRect, in image: LumaImage) -> Bool {
        let texts = Set(zbarCloser(near: area, in: image).map(\.data))
        return texts.contains(other) && !texts.contains(mine)
    }

    /// A 1D code only ZBar read is read again by zxing-cpp on its own region: a different text there means one
    /// engine misread, and zxing-cpp's replaces ZBar's on stills, on video only when ZBar confirms it
    /// (`confirms`). Nothing read there keeps ZBar's read.
    private func verified(_ reads: [Detection], in image: LumaImage) -> [Detection] {
        reads.map { d in
            guard d.engine == "zbar", !ZBarScanner.isTwoDimensional(name: d.type) else { return d }
            let margin = max(d.bounds.width, d.bounds.height) / 4 + 8
            guard let region = image.cropped(to: d.bounds.expanded(by: margin)) else { return d }
            let offset = CropMapping(offsetX: max(0, d.bounds.x - margin), offsetY: max(0, d.bounds.y - margin))
            let second = zxing.read(region, mapping: offset).filter { !ZBarScanner.isTwoDimensional(name: $0.type) }
            if second.contains(where: { $0.data == d.data }) {
                var confirmed = d
                confirmed.engine = "both"
                return confirmed
            }
            guard let other = second.first, thorough || confirms(other.data, over: d.data, near: d.bounds, in: image)
            else { return d }
            return other
        }
    }

    /// One list from two engines' reads of the same image. The same code read by both (same type, overlapping
    /// place) is reported once: ZBar's polygon for 1D codes they agree on (snapped to the bars); when the texts
    /// differ, zxing-cpp's for 2D codes (it resolves their character sets), and for 1D codes only when
    /// `replaces(zbar's, zxing-cpp's)` says so (otherwise ZBar's read stands).
    static func merge(
        zbar: [Detection], zxing: [Detection],
        replaces: (Detection, Detection) -> Bool = { _, _ in true }
    ) -> [Detection] {
        var out = zbar
        for z in zxing {
            if let i = out.firstIndex(where: { $0.type == z.type && $0.bounds.expanded(by: 4).intersects(z.bounds) }) {
                if out[i].data == z.data {
                    out[i].engine = "both"
                    // zxing-cpp reads a structured append's header, which ZBar does not give.
                    if z.sequence != nil { out[i].sequence = z.sequence }
                } else if ZBarScanner.isTwoDimensional(name: z.type) || replaces(out[i], z) {
                    out[i] = z
                }
            } else {
                out.append(z)
            }
        }
        return out
    }
}
