import CCairo
import Foundation

/// The built-in source of moving barcodes with known truth: needs no camera and no file, and generates the test
/// media. Three codes (QR, EAN-13, CODE-128) move inside the default 4:3 viewfinder; where the frame leaves room,
/// a QR code and a vertical CODE-128 move in the strips outside it.
public struct DemoScene: Sendable {
    /// One code where it stands in one frame.
    public struct Placement: Sendable {
        public let symbol: BarcodeSymbol
        /// The symbol's modules, without quiet zone (what ZBar's corners outline): the truth polygon's box.
        public let symbolRect: PixelRect
        /// Symbol plus quiet zone: the white card drawn under it.
        public let cardRect: PixelRect
        public let vertical: Bool
        public let moduleSize: Int
        /// Inside the default viewfinder region.
        public let insideViewfinder: Bool
        /// The conveyor's parcel that carries it (nil in the moving-codes scene).
        public var parcel: Int? = nil
        /// The outline when it is not `symbolRect` itself (a tilted code of the small-codes scene).
        public var corners: [Point]? = nil

        /// Corners top-left, bottom-left, bottom-right, top-right.
        public var polygon: [Point] {
            if let corners { return corners }
            let r = symbolRect
            return [
                Point(Double(r.x), Double(r.y)), Point(Double(r.x), Double(r.maxY)),
                Point(Double(r.maxX), Double(r.maxY)), Point(Double(r.maxX), Double(r.y)),
            ]
        }
    }

    struct Actor: Sendable {
        let symbol: BarcodeSymbol
        let lane: PixelRect  // where the card may move
        let vertical: Bool
        let periodX: Double  // frames per cycle
        let periodY: Double
        let phase: Double
        let insideViewfinder: Bool
    }

    public let size: Size
    public let fps: Int
    /// The region the scene was laid out around (the default viewfinder), nil if the frame is too small for one.
    public let viewfinderRegion: PixelRect?
    public let moduleSize: Int
    let actors: [Actor]
    /// What the scene shows: moving codes, or parcels on a conveyor (`DemoScene+Conveyor`).
    public enum Kind: String, Sendable, CaseIterable {
        case codes, conveyor, small, hard, mix
    }
    public let kind: Kind
    let belt: Belt?
    let small: SmallCodes?
    let mix: Mix?
    /// Where the frame's caption is drawn (`foregroundAreas`).
    let captionArea: PixelRect

    /// - Parameters:
    ///   - seed: the small-codes scene's texts and looks (the other scenes are always the same).
    ///   - mix: what the mixed scene shows (`kind` `.mix` only).
    public init(size: Size, fps: Int = 30, kind: Kind = .codes, seed: UInt64 = 1, mix: DemoMix = DemoMix()) {
        self.size = size
        self.fps = max(1, fps)
        self.kind = kind
        belt = kind == .conveyor ? Belt(size: size) : nil
        small =
            kind == .small || kind == .hard
            ? SmallCodes(size: size, seed: seed, looks: kind == .hard ? .hard : .small) : nil
        self.mix = kind == .mix ? Mix(size: size, mix: mix) : nil
        captionArea = Self.captionArea(size: size)
        let region = Viewfinder().region(in: size)
        viewfinderRegion = region
        let inside = region ?? PixelRect(x: 0, y: 0, width: size.width, height: size.height)
        // Module size scales with the frame so that the picture looks the same at 720p and 2160p.
        var m = max(2, size.height / 240)
        var actors: [Actor] = []
        let symbols = [
            try! QRCode.symbol("https://barscope.dev/demo"),
            try! EAN13.symbol("400638133393"),
            try! Code128.symbol("BARSCOPE-128"),
        ]
        let margin = 8
        while m >= 1 {
            actors = []
            let band = (inside.height - 2 * margin) / symbols.count
            for (i, s) in symbols.enumerated() {
                let lane = PixelRect(
                    x: inside.x + margin, y: inside.y + margin + i * band, width: inside.width - 2 * margin,
                    height: band)
                let card = Self.cardSize(s, module: m, vertical: false)
                guard card.width <= lane.width, card.height <= lane.height else { continue }
                actors.append(
                    Actor(
                        symbol: s, lane: lane, vertical: false, periodX: Double(150 + 70 * i),
                        periodY: Double(110 + 40 * i), phase: Double(i) * 2.1, insideViewfinder: region != nil))
            }
            if actors.count == symbols.count || m == 1 { break }
            m -= 1
        }
        moduleSize = m
        if let region, small == nil {
            // Outside the viewfinder: the left and right strips, when wide enough.
            let left = PixelRect(x: margin, y: margin, width: region.x - 2 * margin, height: size.height - 2 * margin)
            let right = PixelRect(
                x: region.maxX + margin, y: margin, width: size.width - region.maxX - 2 * margin,
                height: size.height - 2 * margin)
            let outside: [(BarcodeSymbol, PixelRect, Bool)] = [
                (try! QRCode.symbol("OUTSIDE-LEFT"), left, false),
                (try! Code128.symbol("SIDE-7"), right, true),
            ]
            for (k, (s, lane, vertical)) in outside.enumerated() {
                let card = Self.cardSize(s, module: m, vertical: vertical)
                guard lane.width >= card.width, lane.height >= card.height else { continue }
                actors.append(
                    Actor(
                        symbol: s, lane: lane, vertical: vertical, periodX: 1e9, periodY: Double(170 + 50 * k),
                        phase: Double(k) * 1.3, insideViewfinder: false))
            }
        }
        self.actors = small == nil ? actors : []
    }

    /// Card (symbol plus quiet zone) size in pixels.
    static func cardSize(_ s: BarcodeSymbol, module m: Int, vertical: Bool) -> Size {
        let w = (s.widthModules + 2 * s.quietZone) * m
        let h = s.isTwoDimensional ? (s.heightModules + 2 * s.quietZone) * m : (s.heightModules + 8) * m
        return vertical ? Size(width: h, height: w) : Size(width: w, height: h)
    }

    /// Where every code is in frame `n` (whole pixels, so the truth is exact).
    public func placements(frame n: Int) -> [Placement] {
        if let belt { return belt.placements(frame: n, viewfinder: viewfinderRegion) }
        if let small { return small.placements(frame: n, viewfinder: viewfinderRegion) }
        if let mix { return mix.placements(frame: n, viewfinder: viewfinderRegion) }
        return actors.map { a in
            let card = Self.cardSize(a.symbol, module: moduleSize, vertical: a.vertical)
            func travel(_ room: Int, _ period: Double, _ phase: Double) -> Int {
                guard room > 0 else { return 0 }
                return Int((Double(room) * (0.5 + 0.5 * sin(2 * Double.pi * Double(n) / period + phase))).rounded())
            }
            let x = a.lane.x + travel(a.lane.width - card.width, a.periodX, a.phase)
            let y = a.lane.y + travel(a.lane.height - card.height, a.periodY, a.phase + 0.7)
            let cardRect = PixelRect(x: x, y: y, width: card.width, height: card.height)
            let m = moduleSize
            let q = a.symbol.quietZone * m
            let padV = a.symbol.isTwoDimensional ? q : 4 * m
            let symW = a.symbol.widthModules * m
            let symH = a.symbol.heightModules * m
            let symbolRect =
                a.vertical
                ? PixelRect(x: x + padV, y: y + q, width: symH, height: symW)
                : PixelRect(x: x + q, y: y + padV, width: symW, height: symH)
            return Placement(
                symbol: a.symbol, symbolRect: symbolRect, cardRect: cardRect, vertical: a.vertical, moduleSize: m,
                insideViewfinder: a.insideViewfinder)
        }
    }

    /// Renders frame `n` into a cairo context whose target is the whole frame.
    public func render(frame n: Int, on cr: OpaquePointer) {
        renderBackground(on: cr)
        renderForeground(frame: n, on: cr)
    }

    /// What every frame has under the codes: the gradient and the grid (the same on every frame, so that a live
    /// source draws it once and copies it, instead of computing a 1080p gradient 30 times a second).
    public func renderBackground(on cr: OpaquePointer) {
        cairo_save(cr)
        defer { cairo_restore(cr) }
        cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE)
        // A dark blue-grey gradient with a faint grid, so the picture is not a flat field.
        let gradient = cairo_pattern_create_linear(0, 0, Double(size.width), Double(size.height))
        cairo_pattern_add_color_stop_rgb(gradient, 0, 0.13, 0.17, 0.24)
        cairo_pattern_add_color_stop_rgb(gradient, 1, 0.20, 0.30, 0.33)
        cairo_set_source(cr, gradient)
        cairo_paint(cr)
        cairo_pattern_destroy(gradient)
        cairo_set_source_rgba(cr, 1, 1, 1, 0.06)
        let step = max(16, size.height / 18)
        for x in stride(from: 0, to: size.width, by: step) { cairo_rectangle(cr, Double(x), 0, 1, Double(size.height)) }
        for y in stride(from: 0, to: size.height, by: step) { cairo_rectangle(cr, 0, Double(y), Double(size.width), 1) }
        cairo_fill(cr)
    }

    /// What moves, drawn over the background: the belt, the cards and their codes, the frame's caption.
    public func renderForeground(frame n: Int, on cr: OpaquePointer) {
        cairo_save(cr)
        defer { cairo_restore(cr) }
        cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE)
        belt?.render(frame: n, on: cr)
        small?.render(frame: n, on: cr)
        mix?.render(frame: n, on: cr)

        for p in small == nil && mix == nil ? placements(frame: n) : [] {
            cairo_set_source_rgb(cr, 0.97, 0.97, 0.95)
            let c = p.cardRect
            cairo_rectangle(cr, Double(c.x), Double(c.y), Double(c.width), Double(c.height))
            cairo_fill(cr)
            cairo_set_source_rgb(cr, 0.05, 0.05, 0.07)
            let m = Double(p.moduleSize)
            let r = p.symbolRect
            let barLength = Double(p.symbol.heightModules) * m
            for run in p.symbol.darkRuns {
                let along = Double(run.start) * m
                let len = Double(run.length) * m
                if p.symbol.isTwoDimensional {
                    cairo_rectangle(cr, Double(r.x) + along, Double(r.y) + Double(run.row) * m, len, m)
                } else if p.vertical {
                    cairo_rectangle(cr, Double(r.x), Double(r.y) + along, barLength, len)
                } else {
                    cairo_rectangle(cr, Double(r.x) + along, Double(r.y), len, barLength)
                }
            }
            cairo_fill(cr)
        }
        cairo_set_source_rgba(cr, 1, 1, 1, 0.8)
        cairo_select_font_face(cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL)
        let fontSize = max(10, Double(size.height) / 50)
        cairo_set_font_size(cr, fontSize)
        cairo_move_to(cr, fontSize * 0.6, Double(size.height) - fontSize * 0.6)
        cairo_show_text(cr, String(format: "barscope demo  frame %05d", n))
    }

    /// Where frame `n` may differ from the background: every pixel `renderForeground` draws, blurs or adds noise
    /// to is inside one of these (they may overlap, and are clipped to the frame). A source then copies the
    /// background and converts only these areas.
    public func foregroundAreas(frame n: Int) -> [PixelRect] {
        var areas = [captionArea]
        if let belt {
            areas.append(belt.band)
        } else if let small {
            areas += small.foregroundAreas(frame: n)
        } else if let mix {
            areas += mix.foregroundAreas(frame: n)
        } else {
            areas += placements(frame: n).map(\.cardRect)
        }
        let frame = PixelRect(x: 0, y: 0, width: size.width, height: size.height)
        return areas.compactMap { $0.clipped(to: frame) }
    }

    /// The frame caption's area: under its text's widest form (a capital W for each digit), with room for its
    /// antialiased edge.
    static func captionArea(size: Size) -> PixelRect {
        let fontSize = max(10, Double(size.height) / 50)
        let surface = cairo_image_surface_create(CAIRO_FORMAT_A8, 1, 1)
        defer { cairo_surface_destroy(surface) }
        let cr = cairo_create(surface)
        defer { cairo_destroy(cr) }
        cairo_select_font_face(cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL)
        cairo_set_font_size(cr, fontSize)
        var extents = cairo_text_extents_t()
        cairo_text_extents(cr, "barscope demo  frame WWWWW", &extents)
        let left = Int((fontSize * 0.6 + min(0, extents.x_bearing)).rounded(.down)) - 2
        let right = Int((fontSize * 0.6 + max(extents.x_advance, extents.x_bearing + extents.width)).rounded(.up)) + 2
        let top = Int((Double(size.height) - fontSize * 0.6 + extents.y_bearing).rounded(.down)) - 2
        return PixelRect(x: left, y: top, width: right - left, height: size.height - top)
    }

    /// Renders frame `n` into BGRx memory (cairo's RGB24 on little-endian machines).
    /// - Parameter background: the background already there (copied from `renderBackground`): only the rest is
    ///   drawn, to the same pixels.
    public func render(frame n: Int, into data: UnsafeMutableRawPointer, stride: Int, background: Bool = false) {
        draw(into: data, stride: stride) { cr in
            if background {
                renderForeground(frame: n, on: cr)
            } else {
                render(frame: n, on: cr)
            }
        }
        // The small-codes scenes blur what they drew (on the pixels, after cairo is done with them), and the hard
        // one adds the sensor's noise.
        small?.blur(frame: n, data: data, stride: stride)
    }

    /// Renders the background alone into BGRx memory.
    public func renderBackground(into data: UnsafeMutableRawPointer, stride: Int) {
        draw(into: data, stride: stride) { renderBackground(on: $0) }
    }

    private func draw(into data: UnsafeMutableRawPointer, stride: Int, _ body: (OpaquePointer) -> Void) {
        let surface = cairo_image_surface_create_for_data(
            data.assumingMemoryBound(to: UInt8.self), CAIRO_FORMAT_RGB24, Int32(size.width), Int32(size.height),
            Int32(stride))
        defer { cairo_surface_destroy(surface) }
        let cr = cairo_create(surface)
        defer { cairo_destroy(cr) }
        body(cr!)
        cairo_surface_flush(surface)
    }
}
