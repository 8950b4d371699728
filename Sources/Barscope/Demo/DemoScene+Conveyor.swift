import CCairo

/// The conveyor scene (`--scene conveyor`): parcels ride a belt from left to right, one at a time through the
/// default viewfinder, with the viewfinder empty for about a second between two, so that read cycles (auto, or
/// commands timed to it) have known truth. Parcels come in fours, numbered from 0:
///
///     n % 4 == 0   one EAN-13 (a good read)            n % 4 == 2   two EAN-13s (multiple, when one is expected)
///     n % 4 == 1   no label (a no-read)                n % 4 == 3   a CODE-128 "WRONG-n" (a mismatch for ^[0-9]{13}$)
///
/// Every EAN-13 is different (`400638` + the parcel's number in five digits + a label digit, and its check digit).
extension DemoScene {
    struct Belt: Sendable {
        let size: Size
        let module: Int
        /// A parcel's box.
        let box: Size
        /// From one parcel's left edge to the next one's, and the belt's speed, in pixels (per frame).
        let spacing: Int
        let speed: Int
        let top: Int

        init(size: Size) {
            self.size = size
            var m = max(2, size.height / 240)
            let sample = try! EAN13.symbol("400638100000")
            var card = DemoScene.cardSize(sample, module: m, vertical: false)
            // Two labels stacked, with room around them, inside the frame's height.
            while m > 1 && (card.height * 2 + 12 * m > size.height * 3 / 4 || card.width + 16 * m > size.width / 3) {
                m -= 1
                card = DemoScene.cardSize(sample, module: m, vertical: false)
            }
            module = m
            box = Size(width: card.width + 16 * m, height: card.height * 2 + 12 * m)
            top = (size.height - box.height) / 2
            speed = max(2, size.width / 64)
            // Between two parcels the viewfinder (at most the frame) stays empty for half the frame's width.
            spacing = size.width + box.width + size.width / 2
        }

        /// The parcels in frame `n`: their numbers and boxes (partly outside the frame at its edges).
        func parcels(frame n: Int) -> [(number: Int, box: PixelRect)] {
            let lead = speed * n - box.width
            var out: [(Int, PixelRect)] = []
            var j = max(0, (lead - size.width) / spacing)
            while lead - j * spacing > -box.width {
                let x = lead - j * spacing
                if x < size.width { out.append((j, PixelRect(x: x, y: top, width: box.width, height: box.height))) }
                j += 1
            }
            return out
        }

        func labels(of parcel: Int) -> [BarcodeSymbol] {
            func ean(_ k: Int) -> BarcodeSymbol {
                try! EAN13.symbol("400638" + String(String(parcel % 100_000 + 100_000).dropFirst()) + String(k))
            }
            switch parcel % 4 {
            case 0: return [ean(0)]
            case 1: return []
            case 2: return [ean(1), ean(2)]
            default: return [try! Code128.symbol("WRONG-\(parcel)")]
            }
        }

        func placements(frame n: Int, viewfinder: PixelRect?) -> [Placement] {
            let m = module
            var out: [Placement] = []
            for (number, b) in parcels(frame: n) {
                let symbols = labels(of: number)
                for (k, s) in symbols.enumerated() {
                    let card = DemoScene.cardSize(s, module: m, vertical: false)
                    let x = b.x + (b.width - card.width) / 2
                    let y =
                        symbols.count == 1
                        ? b.y + (b.height - card.height) / 2 : b.y + 4 * m + k * (card.height + 4 * m)
                    let cardRect = PixelRect(x: x, y: y, width: card.width, height: card.height)
                    let symbolRect = PixelRect(
                        x: x + s.quietZone * m, y: y + 4 * m, width: s.widthModules * m, height: s.heightModules * m)
                    let inside = viewfinder.map {
                        symbolRect.x >= $0.x && symbolRect.maxX <= $0.maxX && symbolRect.y >= $0.y
                            && symbolRect.maxY <= $0.maxY
                    }
                    var p = Placement(
                        symbol: s, symbolRect: symbolRect, cardRect: cardRect, vertical: false, moduleSize: m,
                        insideViewfinder: inside ?? true)
                    p.parcel = number
                    out.append(p)
                }
            }
            return out
        }

        /// The belt's band across the frame: what moves (rollers, parcels and their labels) is inside it.
        var band: PixelRect { PixelRect(x: 0, y: top - 2 * module, width: size.width, height: box.height + 4 * module) }

        /// The belt and the boxes, under the labels.
        func render(frame n: Int, on cr: OpaquePointer) {
            cairo_set_source_rgb(cr, 0.16, 0.16, 0.17)
            cairo_rectangle(cr, 0, Double(top - 2 * module), Double(size.width), Double(box.height + 4 * module))
            cairo_fill(cr)
            // Rollers, moving with the belt.
            cairo_set_source_rgb(cr, 0.26, 0.26, 0.27)
            let pitch = max(8, size.width / 40)
            var x = (speed * n) % pitch - pitch
            while x < size.width {
                cairo_rectangle(
                    cr, Double(x), Double(top - 2 * module), Double(max(1, pitch / 6)), Double(box.height + 4 * module))
                x += pitch
            }
            cairo_fill(cr)
            for (_, b) in parcels(frame: n) {
                cairo_set_source_rgb(cr, 0.69, 0.53, 0.34)
                cairo_rectangle(cr, Double(b.x), Double(b.y), Double(b.width), Double(b.height))
                cairo_fill(cr)
                cairo_set_source_rgb(cr, 0.55, 0.41, 0.25)
                cairo_rectangle(
                    cr, Double(b.x), Double(b.y + b.height / 2 - module), Double(b.width), Double(2 * module))
                cairo_fill(cr)
            }
        }
    }

    /// The conveyor's parcels in frame `n` (empty in the moving-codes scene): what read cycles are tested against.
    public func parcels(frame n: Int) -> [(number: Int, box: PixelRect)] { belt?.parcels(frame: n) ?? [] }

    /// The codes a conveyor parcel carries.
    public func labels(ofParcel number: Int) -> [BarcodeSymbol] { belt?.labels(of: number) ?? [] }
}
