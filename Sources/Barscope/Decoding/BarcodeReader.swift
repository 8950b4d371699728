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
    /// The second pass that gave the last `read` its codes; nil when the first read did, or nothing was found (for
    /// the tests: that a code is read by a second pass, not by the first read).
    private(set) var lastSecondPass: SecondPass?

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
        lastSecondPass = nil
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
                if !found.isEmpty {
                    lastSecondPass = pass
                    break
                }
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
        case .both: return verified(Self.merge(zbar: zbar.scan(image), zxing: zxing.read(image)), in: image)
        }
    }

    /// A 1D code only ZBar read is read again by zxing-cpp on its own region: a different text there means one
    /// engine misread, and zxing-cpp, which checks quiet zones and bar widths more strictly, is believed. Nothing
    /// read there keeps ZBar's read.
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
            return second.first ?? d
        }
    }

    /// One list from two engines' reads of the same image. The same code read by both (same type, overlapping
    /// place) is reported once: with zxing-cpp's text when they differ (it resolves 2D codes' character sets and
    /// checks 1D quiet zones more strictly), ZBar's polygon for 1D codes they agree on (snapped to the bars).
    static func merge(zbar: [Detection], zxing: [Detection]) -> [Detection] {
        var out = zbar
        for z in zxing {
            if let i = out.firstIndex(where: { $0.type == z.type && $0.bounds.expanded(by: 4).intersects(z.bounds) }) {
                if out[i].data == z.data {
                    out[i].engine = "both"
                } else {
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
