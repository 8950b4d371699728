import Foundation

/// Which decoding engine reads the codes.
public enum Engine: String, Sendable, CaseIterable {
    /// ZBar alone: the fastest; the default on video.
    case zbar
    /// zxing-cpp alone.
    case zxing
    /// Both, results cross-checked: the default for still images.
    case both

    /// Parses `--engine zbar|zxing|both`.
    public static func parse(_ text: String) throws -> Engine {
        guard let e = Engine(rawValue: text) else {
            throw BarscopeError.badValue("engine '\(text)': expected zbar, zxing or both")
        }
        return e
    }
}

/// The decoding stage shared by stills and video: ZBar, zxing-cpp or both on one luma image, merged into one list
/// in one naming. Not thread-safe (it owns a ZBar scanner): one per worker.
public final class BarcodeReader {
    public let engine: Engine
    private let zbar: ZBarScanner
    private let zxing: ZXingReader
    private let thorough: Bool
    /// `readHalved`'s image, kept from one call to the next (no allocation per frame).
    private var halfBuffer: [UInt8] = []
    /// How long the second passes may take on one image before it is given up.
    public var secondPassBudget: Duration = .seconds(2)

    /// - Parameters:
    ///   - settings: `-S` values; they choose the formats of both engines.
    ///   - thorough: for stills: zxing-cpp also tries its rotations and inversions, and an image where nothing is
    ///     found gets the second passes (scaled, rotated, stretched, inverted, binarized, sharpened) in turn.
    public init(engine: Engine = .zbar, settings: ScannerSettings = ScannerSettings(), thorough: Bool = false) {
        self.engine = engine
        self.thorough = thorough
        zbar = ZBarScanner(settings: settings)
        zxing = ZXingReader(
            formats: settings.zxingFormats, tryHarder: thorough, upcAAsEAN13: !settings.reportsUPCA,
            upcEAsEAN13: !settings.reportsUPCE)
    }

    /// The ZBar scanner, for callers that tune its densities (the tracked mode).
    public var zbarScanner: ZBarScanner { zbar }

    /// Reads one luma image (a frame, or the viewfinder's crop of one).
    /// - Parameters:
    ///   - mapping: crop → full frame; every point comes back in full-frame pixels.
    ///   - viewfinder: the region the image was cropped to, if any: judges `inViewfinder`, and 1D reads that run
    ///     into its edge are dropped (a code cut by the crop can read as a shorter valid code).
    public func read(_ image: LumaImage, mapping: CropMapping = CropMapping(), viewfinder: PixelRect? = nil)
        -> [Detection]
    {
        let cropped = viewfinder != nil
        var found = readOnce(image).filter { Plausibility.accepts($0, in: image, cropped: cropped) }
        if thorough && found.isEmpty {
            let deadline = ContinuousClock.now + secondPassBudget
            for pass in SecondPass.order(for: image) where ContinuousClock.now < deadline {
                let t = pass.apply(to: image)
                found = t.withImage { readOnce($0) }.map { d in
                    var back = d
                    back.polygon = d.polygon.map(t.toSource)
                    back.bounds = Bounds(enclosing: back.polygon)
                    return back
                }.filter { Plausibility.accepts($0, in: image, cropped: cropped) }
                if !found.isEmpty { break }
            }
        }
        return found.map { d in
            var placed = d
            placed.polygon = d.polygon.map(mapping.toFrame)
            placed.bounds = Bounds(enclosing: placed.polygon)
            placed.inViewfinder = viewfinder.map { $0.contains(all: placed.polygon) } ?? true
            return placed
        }
    }

    /// Reads the image at half its size (each 2x2 block averaged into a buffer this reader keeps): a quarter of
    /// the pixels for a search that only has to find codes, not box them exactly. Points come back in the image's
    /// own pixels (doubled); codes with modules under two pixels may be missed.
    public func readHalved(_ image: LumaImage) -> [Detection] {
        let w = image.width / 2
        let h = image.height / 2
        guard w >= 8, h >= 8 else { return readOnce(image) }
        if halfBuffer.count < w * h { halfBuffer = [UInt8](repeating: 0, count: w * h) }
        let found = halfBuffer.withUnsafeMutableBufferPointer { out -> [Detection] in
            image.halve(into: out.baseAddress!)
            return readOnce(LumaImage(base: UnsafeRawPointer(out.baseAddress!), width: w, height: h, stride: w))
        }
        return found.map { d in
            var full = d
            full.polygon = d.polygon.map { Point($0.x * 2 + 0.5, $0.y * 2 + 0.5) }
            full.bounds = Bounds(enclosing: full.polygon)
            full.lengthAcrossBars = d.lengthAcrossBars.map { $0 * 2 }
            return full
        }
    }

    /// One read by the chosen engines, in the image's own pixels.
    private func readOnce(_ image: LumaImage) -> [Detection] {
        switch engine {
        case .zbar: return zbar.scan(image)
        case .zxing: return zxing.read(image)
        case .both:
            // Stills (thorough) believe zxing-cpp where the engines differ: measured on the real-photo set, where it
            // misreads least. Video frames do not (see `confirms`).
            let merged = Self.merge(zbar: zbar.scan(image), zxing: zxing.read(image)) { z, x in
                self.thorough || self.confirms(x.data, over: z.data, near: z.bounds, in: image)
            }
            return verified(merged, in: image).compactMap { d in
                // A 1D code only zxing-cpp read: the union must not add its misreads (on small, blurred codes it
                // reads a wrong EAN or UPC with a right check digit now and then). ZBar looks again at twice the
                // size: the same text confirms it, a different one drops it. Where ZBar reads nothing there even
                // so, zxing-cpp's read stands only if zxing-cpp reads the same again at twice the size (a misread
                // seldom survives a resampling).
                guard !thorough, d.engine == "zxing", !ZBarScanner.isTwoDimensional(name: d.type) else { return d }
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

/// What a still gets when the first read finds nothing: each pass a new image (one or more steps), read again by
/// the same engines.
struct SecondPass: Equatable {
    enum Step: Equatable {
        case scaled(Double)
        case rotated(Double)
        case stretched
        case inverted
        case binarized
        case sharpened
    }
    var steps: [Step]

    static let plan = "down,up,rot,stretch,invert,bin,sharp,sharp+bin,up+sharp,rot+bin,down+bin,up+bin,stretch+sharp"

    /// The passes to try on this image, in order (upscaling only for images up to 1600 pixels).
    static func order(for image: LumaImage) -> [SecondPass] {
        var out: [SecondPass] = []
        let big = max(image.width, image.height) > 1600
        // Measured on the real-photo set (each kept because it reads codes no earlier pass did); cheap ones first.
        for token in Self.plan.split(separator: ",") {
            var chains: [[Step]] = [[]]
            for p in token.split(separator: "+") {
                let options: [Step]
                switch p {
                case "down": options = [.scaled(0.5)]
                case "up": options = big ? [] : [.scaled(2)]
                case "rot": options = [30, -30, 45, -45, 60, -60].map { .rotated($0) }
                case "stretch": options = [.stretched]
                case "invert": options = [.inverted]
                case "bin": options = [.binarized]
                case "sharp": options = [.sharpened]
                default: options = []
                }
                chains = options.isEmpty ? [] : chains.flatMap { c in options.map { c + [$0] } }
            }
            out += chains.filter { !$0.isEmpty }.map { SecondPass(steps: $0) }
        }
        return out
    }

    func apply(to image: LumaImage) -> TransformedLuma {
        var current = Self.apply(steps[0], to: image)
        for step in steps.dropFirst() {
            let next = current.withImage { Self.apply(step, to: $0) }
            let outer = current.toSource
            let inner = next.toSource
            current = TransformedLuma(
                pixels: next.pixels, width: next.width, height: next.height,
                toSource: { outer(inner($0)) })
        }
        return current
    }

    private static func apply(_ step: Step, to image: LumaImage) -> TransformedLuma {
        switch step {
        case .scaled(let f): return .scaled(image, by: f)
        case .rotated(let d): return .rotated(image, degrees: d)
        case .inverted: return .remapped(image, (0...255).map { UInt8(255 - $0) })
        case .binarized: return .binarized(image, window: max(15, min(image.width, image.height) / 8))
        case .sharpened: return .sharpened(image)
        case .stretched:
            // Levels from the 2nd to the 98th percentile spread over 0...255: faded print, low-contrast photos.
            var histogram = [Int](repeating: 0, count: 256)
            let src = image.base.assumingMemoryBound(to: UInt8.self)
            for y in 0..<image.height { for x in 0..<image.width { histogram[Int(src[y * image.stride + x])] += 1 } }
            let total = image.width * image.height
            var low = 0
            var high = 255
            var seen = 0
            for v in 0...255 {
                seen += histogram[v]
                if seen >= total / 50 {
                    low = v
                    break
                }
            }
            seen = 0
            for v in (0...255).reversed() {
                seen += histogram[v]
                if seen >= total / 50 {
                    high = v
                    break
                }
            }
            let span = max(1, high - low)
            return .remapped(image, (0...255).map { UInt8(min(255, max(0, ($0 - low) * 255 / span))) })
        }
    }
}
