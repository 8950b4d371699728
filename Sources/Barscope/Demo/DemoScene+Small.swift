import CCairo
import CZXingReader
import Foundation

/// The small-codes scene (`--scene small`): hard 1D codes of every symbology ZBar reads and zxing-cpp can write
/// (EAN-13, EAN-8, UPC-A, UPC-E, I2/5, CODE-39, CODE-93, CODE-128, Codabar), one per cell of a grid, each with its
/// own module width (1 to 1.5 px; Codabar 1.5 to 2), tilt (up to 12 degrees, rocking slowly), contrast (bars and card a few tens of
/// grey levels apart) and blur (a Gaussian of 0.2 to 0.7 px), drifting by fractions of a pixel. Texts and looks
/// come from `seed`, so clips of other seeds are codes nothing was tuned on. The truth polygon is the symbol's
/// tilted outline (quiet zone left out), exact to the rendering.
///
/// Types and texts in the truth are as Barscope reports them with its default settings (ZBar's defaults): UPC-A as
/// an EAN-13 with a leading 0, UPC-E as the EAN-13 of the UPC-A it stands for. DataBar is left out: no writer here draws it.
extension DemoScene {
    struct SmallCodes: Sendable {
        struct Code: Sendable {
            let symbol: BarcodeSymbol
            let cell: PixelRect
            /// Module width in pixels, fractional.
            let module: Double
            let barHeight: Double
            /// Tilt in degrees, and how far it rocks either side over `period` frames.
            let tilt: Double
            let rock: Double
            let period: Double
            let phase: Double
            /// Grey levels 0...1 of the bars and the card.
            let dark: Double
            let light: Double
            let blur: Double
        }

        /// The ranges the looks are drawn from.
        struct Looks: Sendable {
            /// Module width (px): its least and how much more, and the same for Codabar.
            var module: (least: Double, spread: Double)
            var codabarModule: (least: Double, spread: Double)
            /// Gaussian blur (px).
            var blur: (least: Double, spread: Double)
            /// Card minus bars, in grey levels 0...1.
            var contrast: (least: Double, spread: Double)
            /// The bars' grey level.
            var dark: (least: Double, spread: Double)
            /// The standard deviation of the sensor's noise, in 8-bit levels, new in every frame (0: none).
            var noise: Double

            /// `--scene small`: codes at the edge of what ZBar reads.
            static let small = Looks(
                module: (1.0, 0.5), codabarModule: (1.5, 0.5), blur: (0.2, 0.5), contrast: (0.3, 0.3),
                dark: (0.1, 0.3), noise: 0)
            /// `--scene hard`: past that edge (more blur for the module, less contrast, noise), where ZBar misses
            /// most at the frame's size and at twice it, yet the bars are still in the pixels.
            static let hard = Looks(
                module: (1.0, 1.0), codabarModule: (1.5, 1.0), blur: (0.4, 0.6), contrast: (0.08, 0.22),
                dark: (0.2, 0.3), noise: 2)
        }

        let size: Size
        let codes: [Code]
        let looks: Looks
        let seed: UInt64
        static let quiet = 10.0

        init(size: Size, seed: UInt64, looks: Looks = .small) {
            self.size = size
            self.looks = looks
            self.seed = seed
            var rng = SplitMix64(seed: seed)
            let columns = max(1, size.width / 320)
            let rows = max(1, size.height / 180)
            let cw = size.width / columns
            let ch = size.height / rows
            var codes: [Code] = []
            for i in 0..<(columns * rows) {
                let kind = Self.kinds[i % Self.kinds.count]
                let cell = PixelRect(x: (i % columns) * cw, y: (i / columns) * ch, width: cw, height: ch)
                guard let symbol = Self.symbol(kind, rng: &rng) else { continue }
                // ZBar reads no Codabar under 1.5 px a module, however sharp (measured): its own range starts there.
                var module = rng.value(in: kind == .codabar ? looks.codabarModule : looks.module)
                // The card, tilted, must fit its cell with a few pixels to move in.
                let room = Double(cw) - 24
                let cardWidth = Double(symbol.widthModules) + 2 * Self.quiet
                if cardWidth * module > room { module = max(1.0, room / cardWidth) }
                guard cardWidth * module <= room else { continue }
                let dark = rng.value(in: looks.dark)
                let light = dark + rng.value(in: looks.contrast)
                codes.append(
                    Code(
                        symbol: symbol, cell: cell, module: module, barHeight: 22 + 16 * rng.unit(),
                        tilt: 24 * rng.unit() - 12, rock: 2 * rng.unit(), period: 90 + 90 * rng.unit(),
                        phase: 2 * Double.pi * rng.unit(), dark: dark, light: min(0.92, light),
                        blur: rng.value(in: looks.blur)))
            }
            self.codes = codes
        }

        /// zxing-cpp's format bit and the truth's type for each symbology drawn.
        enum Kind: CaseIterable {
            case ean13, ean8, upca, upce, i25, code39, code93, code128, codabar
        }
        static let kinds = Kind.allCases

        static func symbol(_ kind: Kind, rng: inout SplitMix64) -> BarcodeSymbol? {
            func digits(_ n: Int, first: ClosedRange<Int> = 0...9) -> String {
                var s = String(Int.random(in: first, using: &rng))
                while s.count < n { s += String(Int.random(in: 0...9, using: &rng)) }
                return String(s.prefix(n))
            }
            func chars(_ n: Int, from alphabet: String) -> String {
                let a = Array(alphabet)
                return String((0..<n).map { _ in a[Int.random(in: 0..<a.count, using: &rng)] })
            }
            let upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
            let (format, type, text): (Int, String, String)
            switch kind {
            // 1...9 first and no 978/979 (Bookland): the stock element reports those as ISBN-13.
            case .ean13:
                var d = digits(12, first: 1...9)
                while d.hasPrefix("978") || d.hasPrefix("979") { d = digits(12, first: 1...9) }
                (format, type, text) = (BS_ZX_EAN13, "EAN-13", d)
            case .ean8: (format, type, text) = (BS_ZX_EAN8, "EAN-8", digits(7))
            case .upca: (format, type, text) = (BS_ZX_UPCA, "EAN-13", digits(11, first: 1...9))
            case .upce: (format, type, text) = (BS_ZX_UPCE, "EAN-13", "0" + digits(6))
            case .i25: (format, type, text) = (BS_ZX_ITF, "I2/5", digits(2 * Int.random(in: 3...5, using: &rng)))
            case .code39:
                (format, type, text) = (BS_ZX_CODE39, "CODE-39", chars(Int.random(in: 5...8, using: &rng), from: upper))
            case .code93:
                (format, type, text) = (BS_ZX_CODE93, "CODE-93", chars(Int.random(in: 5...8, using: &rng), from: upper))
            case .code128:
                let mixed = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-."
                (format, type, text) = (
                    BS_ZX_CODE128, "CODE-128", chars(Int.random(in: 6...10, using: &rng), from: mixed)
                )
            case .codabar:
                let ends = "ABCD"
                (format, type, text) = (
                    BS_ZX_CODABAR, "Codabar",
                    chars(1, from: ends) + digits(Int.random(in: 5...8, using: &rng)) + chars(1, from: ends)
                )
            }
            var modules = [UInt8](repeating: 0, count: 512)
            let n = bs_zx_encode_linear(UInt32(format), text, &modules, Int32(modules.count))
            guard n > 0, Int(n) <= modules.count else { return nil }
            return BarcodeSymbol(
                type: type, text: Self.reported(kind, text), modules: [modules.prefix(Int(n)).map { $0 != 0 }],
                quietZone: Int(Self.quiet), barHeightModules: 1)
        }

        /// The text as ZBar reports it: with the check digit it computes (EAN, UPC) and UPC-A in its EAN-13 form.
        static func reported(_ kind: Kind, _ text: String) -> String {
            func check(_ d: String) -> String {
                // The GTIN check digit: weights 3 and 1 from the right.
                let sum = d.reversed().enumerated().reduce(0) { s, e in
                    s + Int(String(e.element))! * (e.offset % 2 == 0 ? 3 : 1)
                }
                return d + String((10 - sum % 10) % 10)
            }
            switch kind {
            case .ean13, .ean8: return check(text)
            case .upca: return "0" + check(text)
            case .upce: return "0" + check(Self.expandUPCE(text))
            default: return text
            }
        }

        /// UPC-E's seven digits (number system and six) as the UPC-A digits it stands for, without check digit.
        static func expandUPCE(_ e: String) -> String {
            let d = Array(e)
            let ns = String(d[0])
            let m = d[1...6].map(String.init)
            switch m[5] {
            case "0", "1", "2": return ns + m[0] + m[1] + m[5] + "0000" + m[2] + m[3] + m[4]
            case "3": return ns + m[0] + m[1] + m[2] + "00000" + m[3] + m[4]
            case "4": return ns + m[0] + m[1] + m[2] + m[3] + "00000" + m[4]
            default: return ns + m[0] + m[1] + m[2] + m[3] + m[4] + "0000" + m[5]
            }
        }

        /// Where code `c` is in frame `n`: its centre, tilt (radians) and the size of its card.
        func pose(_ c: Code, frame n: Int) -> (cx: Double, cy: Double, angle: Double, w: Double, h: Double) {
            let t = 2 * Double.pi * Double(n) / c.period + c.phase
            let angle = (c.tilt + c.rock * sin(t)) * Double.pi / 180
            let w = (Double(c.symbol.widthModules) + 2 * Self.quiet) * c.module
            let h = c.barHeight + 8
            // Drift by fractions of a pixel around the cell's centre, within what the tilted card leaves.
            let bw = abs(w * cos(angle)) + abs(h * sin(angle))
            let bh = abs(w * sin(angle)) + abs(h * cos(angle))
            let rx = max(0, (Double(c.cell.width) - bw) / 2 - 4)
            let ry = max(0, (Double(c.cell.height) - bh) / 2 - 4)
            let cx = Double(c.cell.x) + Double(c.cell.width) / 2 + rx * sin(0.7 * t)
            let cy = Double(c.cell.y) + Double(c.cell.height) / 2 + ry * cos(0.5 * t)
            return (cx, cy, angle, w, h)
        }

        func placements(frame n: Int, viewfinder: PixelRect?) -> [Placement] {
            codes.map { c in
                let p = pose(c, frame: n)
                let sw = Double(c.symbol.widthModules) * c.module
                let sh = c.barHeight
                let (cosA, sinA) = (cos(p.angle), sin(p.angle))
                func place(_ x: Double, _ y: Double) -> Point {
                    Point(p.cx + x * cosA - y * sinA, p.cy + x * sinA + y * cosA)
                }
                // Top-left, bottom-left, bottom-right, top-right of the bars, as the other scenes' truth.
                let corners = [
                    place(-sw / 2, -sh / 2), place(-sw / 2, sh / 2), place(sw / 2, sh / 2), place(sw / 2, -sh / 2),
                ]
                let cardCorners = [
                    place(-p.w / 2, -p.h / 2), place(-p.w / 2, p.h / 2), place(p.w / 2, p.h / 2),
                    place(p.w / 2, -p.h / 2),
                ]
                let symbolRect = Self.enclosing(corners)
                let cardRect = Self.enclosing(cardCorners)
                return Placement(
                    symbol: c.symbol, symbolRect: symbolRect, cardRect: cardRect, vertical: false,
                    moduleSize: Int(c.module.rounded()),
                    insideViewfinder: viewfinder.map { $0.contains(all: corners) } ?? true, corners: corners)
            }
        }

        static func enclosing(_ points: [Point]) -> PixelRect {
            let x0 = Int(points.map(\.x).min()!.rounded(.down))
            let y0 = Int(points.map(\.y).min()!.rounded(.down))
            let x1 = Int(points.map(\.x).max()!.rounded(.up))
            let y1 = Int(points.map(\.y).max()!.rounded(.up))
            return PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
        }

        /// Draws every card and its bars, antialiased (fractional modules and tilt), before the blur.
        func render(frame n: Int, on cr: OpaquePointer) {
            cairo_save(cr)
            defer { cairo_restore(cr) }
            cairo_set_antialias(cr, CAIRO_ANTIALIAS_DEFAULT)
            for c in codes {
                let p = pose(c, frame: n)
                cairo_save(cr)
                cairo_translate(cr, p.cx, p.cy)
                cairo_rotate(cr, p.angle)
                cairo_set_source_rgb(cr, c.light, c.light, c.light * 0.98)
                cairo_rectangle(cr, -p.w / 2, -p.h / 2, p.w, p.h)
                cairo_fill(cr)
                cairo_set_source_rgb(cr, c.dark, c.dark, c.dark)
                let x0 = -p.w / 2 + Self.quiet * c.module
                for run in c.symbol.darkRuns {
                    cairo_rectangle(
                        cr, x0 + Double(run.start) * c.module, -c.barHeight / 2, Double(run.length) * c.module,
                        c.barHeight)
                }
                cairo_fill(cr)
                cairo_restore(cr)
            }
        }

        /// What `render` and `blur` change: each card's box, grown by its blur's reach and a pixel of antialiasing.
        func foregroundAreas(frame n: Int) -> [PixelRect] {
            zip(codes, placements(frame: n, viewfinder: nil)).map { c, placed in
                placed.cardRect.expanded(by: Int((3 * c.blur).rounded(.up)) + 3)
            }
        }

        /// Blurs each card's region of a BGRx frame with its code's Gaussian (the lens and the focus), then adds
        /// the looks' noise there (the same grey in the three channels: a luma noise), new in every frame.
        func blur(frame n: Int, data: UnsafeMutableRawPointer, stride: Int) {
            let px = data.assumingMemoryBound(to: UInt8.self)
            var noise = SplitMix64(seed: seed &* 0x1_0000_0001 &+ UInt64(n))
            for (c, placed) in zip(codes, placements(frame: n, viewfinder: nil)) {
                let radius = Int((3 * c.blur).rounded(.up))
                let kernel = (-radius...radius).map { exp(-Double($0 * $0) / (2 * c.blur * c.blur)) }
                let total = kernel.reduce(0, +)
                let weights = kernel.map { $0 / total }
                let r = placed.cardRect.expanded(by: radius + 2)
                let x0 = max(0, r.x)
                let y0 = max(0, r.y)
                let x1 = min(size.width, r.maxX)
                let y1 = min(size.height, r.maxY)
                guard x1 - x0 > 2 * radius, y1 - y0 > 2 * radius else { continue }
                let w = x1 - x0
                let h = y1 - y0
                var plane = [Double](repeating: 0, count: w * h)
                var tmp = plane
                for ch in 0..<3 {
                    for y in 0..<h {
                        for x in 0..<w { plane[y * w + x] = Double(px[(y0 + y) * stride + (x0 + x) * 4 + ch]) }
                    }
                    for y in 0..<h {
                        for x in 0..<w {
                            var s = 0.0
                            for k in -radius...radius {
                                s += weights[k + radius] * plane[y * w + min(w - 1, max(0, x + k))]
                            }
                            tmp[y * w + x] = s
                        }
                    }
                    for y in 0..<h {
                        for x in 0..<w {
                            var s = 0.0
                            for k in -radius...radius {
                                s += weights[k + radius] * tmp[min(h - 1, max(0, y + k)) * w + x]
                            }
                            px[(y0 + y) * stride + (x0 + x) * 4 + ch] = Self.level(s)
                        }
                    }
                }
                guard looks.noise > 0 else { continue }
                for y in 0..<h {
                    for x in 0..<w {
                        let e = looks.noise * noise.gaussian()
                        for ch in 0..<3 {
                            let i = (y0 + y) * stride + (x0 + x) * 4 + ch
                            px[i] = Self.level(Double(px[i]) + e)
                        }
                    }
                }
            }
        }

        static func level(_ v: Double) -> UInt8 { UInt8(min(255, max(0, v.rounded()))) }
    }
}

/// A small seedable generator (SplitMix64): the same seed gives the same scene on every machine.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// Uniform in 0..<1.
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
    /// Uniform from `range.least`, up to `range.spread` more (one draw, as `unit`).
    mutating func value(in range: (least: Double, spread: Double)) -> Double { range.least + range.spread * unit() }
    /// Standard normal (Box-Muller).
    mutating func gaussian() -> Double {
        let u = max(1e-12, unit())
        return (-2 * log(u)).squareRoot() * cos(2 * Double.pi * unit())
    }
}
