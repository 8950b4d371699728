import CCairo
import Foundation

/// What the mixed scene (`--scene mix`) shows: how many codes, how small, how fast, when they come into view, and
/// how soft their edges are. The bench's varied clips and the tracked-mode tests are made from it; the same seed
/// gives the same clip.
public struct DemoMix: Sendable, Equatable {
    /// How many codes (each in a cell of its own, so that codes never overlap).
    public var codes = 6
    /// Pixels per module; fractional sizes are drawn antialiased (a 1.5 px module is a blur of grey edges).
    public var module = 2.0
    /// Pixels per frame each code travels (bouncing inside its cell); 0 = still.
    public var speed = 3.0
    /// Code `i` comes into view at frame `i × appearEvery` (0: all from the first frame).
    public var appearEvery = 0
    /// Passes of a small Gaussian blur (σ ≈ 0.7 px each) over each code's card (0: none).
    public var blur = 0
    /// 1D codes only (EAN-13 and CODE-128), no QR.
    public var only1D = false
    public var seed: UInt64 = 1

    public init() {}
}

extension DemoScene {
    /// The mixed scene: `mix.codes` codes with data drawn from the seed (EAN-13, CODE-128 and, unless `only1D`,
    /// QR), each bouncing in its own cell of a grid laid over the frame, drawn at a fractional module size.
    struct Mix: Sendable {
        struct Code: Sendable {
            let symbol: BarcodeSymbol
            let cell: PixelRect
            let card: (width: Double, height: Double)
            let start: Point
            let velocity: Point
            let appears: Int
        }
        let mix: DemoMix
        let codes: [Code]

        init(size: Size, mix: DemoMix) {
            self.mix = mix
            var rng = SplitMix64(seed: mix.seed)
            let n = max(1, mix.codes)
            // The grid closest to square cells: columns × rows ≥ n.
            var columns = 1
            while columns * Int((Double(columns) * Double(size.height) / Double(size.width)).rounded(.up)) < n {
                columns += 1
            }
            let rows = max(1, (n + columns - 1) / columns)
            let cw = size.width / columns
            let ch = size.height / rows
            var out: [Code] = []
            for i in 0..<n {
                let kinds = mix.only1D ? 2 : 3
                let symbol: BarcodeSymbol
                switch (i + Int(rng.next() % 3)) % kinds {
                case 0: symbol = try! EAN13.symbol(String(format: "%06d%06d", 400_000 + i, Int(rng.next() % 1_000_000)))
                case 1: symbol = try! Code128.symbol(String(format: "MIX-%02d-%04d", i, Int(rng.next() % 10_000)))
                default:
                    symbol = try! QRCode.symbol(
                        String(format: "https://barscope.dev/mix/%02d/%05d", i, Int(rng.next() % 100_000)))
                }
                let m = mix.module
                let w = Double(symbol.widthModules + 2 * symbol.quietZone) * m
                let h =
                    symbol.isTwoDimensional
                    ? Double(symbol.heightModules + 2 * symbol.quietZone) * m : Double(symbol.heightModules + 8) * m
                let cell = PixelRect(
                    x: (i % columns) * cw + 4, y: (i / columns) * ch + 4, width: cw - 8, height: ch - 8)
                let roomX = max(0, Double(cell.width) - w)
                let roomY = max(0, Double(cell.height) - h)
                let start = Point(rng.unit() * roomX, rng.unit() * roomY)
                let angle = rng.unit() * 2 * Double.pi
                out.append(
                    Code(
                        symbol: symbol, cell: cell, card: (w, h), start: start,
                        velocity: Point(cos(angle) * mix.speed, sin(angle) * mix.speed),
                        appears: i * max(0, mix.appearEvery)))
            }
            codes = out
        }

        /// Where a code's card is in frame `n`: its start moved by its velocity, reflected at the cell's walls.
        func origin(_ c: Code, frame n: Int) -> Point {
            func bounce(_ p: Double, _ room: Double) -> Double {
                guard room > 0 else { return 0 }
                let m = p.truncatingRemainder(dividingBy: 2 * room)
                let q = m < 0 ? m + 2 * room : m
                return q <= room ? q : 2 * room - q
            }
            let roomX = max(0, Double(c.cell.width) - c.card.width)
            let roomY = max(0, Double(c.cell.height) - c.card.height)
            let t = Double(n - c.appears)
            return Point(
                Double(c.cell.x) + bounce(c.start.x + c.velocity.x * t, roomX),
                Double(c.cell.y) + bounce(c.start.y + c.velocity.y * t, roomY))
        }

        func placements(frame n: Int, viewfinder: PixelRect?) -> [Placement] {
            codes.filter { n >= $0.appears }.map { c in
                let o = origin(c, frame: n)
                let m = mix.module
                let s = c.symbol
                let x0 = o.x + Double(s.quietZone) * m
                let y0 = o.y + (s.isTwoDimensional ? Double(s.quietZone) * m : 4 * m)
                let symbolRect = PixelRect(
                    x: Int(x0.rounded()), y: Int(y0.rounded()), width: Int((Double(s.widthModules) * m).rounded()),
                    height: Int((Double(s.heightModules) * m).rounded()))
                let cardRect = PixelRect(
                    x: Int(o.x.rounded()), y: Int(o.y.rounded()), width: Int(c.card.width.rounded()),
                    height: Int(c.card.height.rounded()))
                return Placement(
                    symbol: s, symbolRect: symbolRect, cardRect: cardRect, vertical: false,
                    moduleSize: Int(m.rounded(.up)),
                    insideViewfinder: viewfinder?.contains(all: Self.corners(cardRect)) ?? true)
            }
        }

        static func corners(_ r: PixelRect) -> [Point] {
            [
                Point(Double(r.x), Double(r.y)), Point(Double(r.maxX), Double(r.y)), Point(Double(r.x), Double(r.maxY)),
                Point(Double(r.maxX), Double(r.maxY)),
            ]
        }

        /// What `render` changes: each card in view, with its antialiased edge (the blur stays inside the card's
        /// box grown by 2).
        func foregroundAreas(frame n: Int) -> [PixelRect] {
            codes.filter { n >= $0.appears }.map { c in
                let o = origin(c, frame: n)
                let x = Int(o.x.rounded(.down))
                let y = Int(o.y.rounded(.down))
                return PixelRect(
                    x: x - 3, y: y - 3, width: Int(c.card.width.rounded(.up)) + 7,
                    height: Int(c.card.height.rounded(.up)) + 7)
            }
        }

        /// Draws every code in view, antialiased (fractional modules), then blurs each card when asked.
        func render(frame n: Int, on cr: OpaquePointer) {
            cairo_save(cr)
            cairo_set_antialias(cr, CAIRO_ANTIALIAS_DEFAULT)
            let m = mix.module
            var cards: [PixelRect] = []
            for c in codes where n >= c.appears {
                let o = origin(c, frame: n)
                cairo_set_source_rgb(cr, 0.97, 0.97, 0.95)
                cairo_rectangle(cr, o.x, o.y, c.card.width, c.card.height)
                cairo_fill(cr)
                cairo_set_source_rgb(cr, 0.05, 0.05, 0.07)
                let s = c.symbol
                let x0 = o.x + Double(s.quietZone) * m
                let y0 = o.y + (s.isTwoDimensional ? Double(s.quietZone) * m : 4 * m)
                for run in s.darkRuns {
                    let row = s.isTwoDimensional ? Double(run.row) * m : 0
                    let height = s.isTwoDimensional ? m : Double(s.heightModules) * m
                    cairo_rectangle(cr, x0 + Double(run.start) * m, y0 + row, Double(run.length) * m, height)
                }
                cairo_fill(cr)
                cards.append(
                    PixelRect(
                        x: Int(o.x) - 2, y: Int(o.y) - 2, width: Int(c.card.width) + 4, height: Int(c.card.height) + 4))
            }
            cairo_restore(cr)
            guard mix.blur > 0, let target = cairo_get_target(cr), cairo_image_surface_get_data(target) != nil else {
                return
            }
            cairo_surface_flush(target)
            let data = cairo_image_surface_get_data(target)!
            let stride = Int(cairo_image_surface_get_stride(target))
            let width = Int(cairo_image_surface_get_width(target))
            let height = Int(cairo_image_surface_get_height(target))
            for card in cards {
                Self.blur(data, stride: stride, width: width, height: height, rect: card, passes: mix.blur)
            }
            cairo_surface_mark_dirty(target)
        }

        /// `passes` times a separable [1 2 1] / 4 blur (a Gaussian of σ ≈ 0.7 px per pass) of 4-byte pixels inside
        /// `rect` (clipped to the image), rows then columns.
        static func blur(
            _ data: UnsafeMutablePointer<UInt8>, stride: Int, width: Int, height: Int, rect: PixelRect, passes: Int
        ) {
            let x0 = max(0, rect.x)
            let y0 = max(0, rect.y)
            let x1 = min(width, rect.x + rect.width)
            let y1 = min(height, rect.y + rect.height)
            guard x1 - x0 > 2, y1 - y0 > 2 else { return }
            var line = [Int](repeating: 0, count: max(x1 - x0, y1 - y0))
            for _ in 0..<passes {
                for y in y0..<y1 {
                    for ch in 0..<3 {
                        for x in x0..<x1 { line[x - x0] = Int(data[y * stride + x * 4 + ch]) }
                        for x in (x0 + 1)..<(x1 - 1) {
                            let i = x - x0
                            data[y * stride + x * 4 + ch] = UInt8((line[i - 1] + 2 * line[i] + line[i + 1] + 2) / 4)
                        }
                    }
                }
                for x in x0..<x1 {
                    for ch in 0..<3 {
                        for y in y0..<y1 { line[y - y0] = Int(data[y * stride + x * 4 + ch]) }
                        for y in (y0 + 1)..<(y1 - 1) {
                            let i = y - y0
                            data[y * stride + x * 4 + ch] = UInt8((line[i - 1] + 2 * line[i] + line[i + 1] + 2) / 4)
                        }
                    }
                }
            }
        }
    }
}
