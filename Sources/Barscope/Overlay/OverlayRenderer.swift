import CCairo
import Foundation

/// Draws what the user sees onto a frame with cairo: the viewfinder (mask and rounded outline), and for each code
/// its bounding box, its corner polygon and a label.
///
/// The `cairo_t` is borrowed from the caller (cairooverlay's draw signal, or a snapshot surface): never kept.
public struct OverlayRenderer: Sendable {
    public var style: OverlayStyle

    public init(style: OverlayStyle = OverlayStyle()) { self.style = style }

    /// - Parameter status: the status line's text, drawn when the style shows it.
    /// - Parameter secondary: the dashed secondary region, if any.
    public func draw(
        on cr: OpaquePointer, frame: Size, viewfinder: PixelRect?, secondary: PixelRect? = nil,
        detections: [Detection], status: String? = nil
    ) {
        cairo_save(cr)
        defer { cairo_restore(cr) }
        if let region = viewfinder { drawViewfinder(cr, frame: frame, region: region) }
        if let inner = secondary, let line = style.viewfinderLineColor, style.viewfinderLineWidth > 0 {
            cairo_new_path(cr)
            roundedRect(
                cr, inner, radius: min(style.viewfinderCornerRadius, Double(min(inner.width, inner.height)) / 2))
            var dashes = [3 * style.viewfinderLineWidth + 4, 2 * style.viewfinderLineWidth + 4]
            cairo_set_dash(cr, &dashes, 2, 0)
            set(cr, line)
            cairo_set_line_width(cr, style.viewfinderLineWidth)
            cairo_stroke(cr)
            cairo_set_dash(cr, nil, 0, 0)
        }
        for d in detections { drawCode(cr, d) }
        if style.showLabels {
            for d in detections { drawLabel(cr, d, frame: frame, avoiding: detections.map(\.bounds)) }
        }
        if style.showStatus, let status { drawStatus(cr, status, frame: frame) }
    }

    /// What the scanner is doing, top-left, on the same dark plate as the labels.
    func drawStatus(_ cr: OpaquePointer, _ text: String, frame: Size) {
        let size = max(11, Double(frame.height) / 54)
        cairo_select_font_face(cr, style.labelFont, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL)
        cairo_set_font_size(cr, size)
        var ext = cairo_text_extents_t()
        cairo_text_extents(cr, text, &ext)
        let pad = size * 0.35
        cairo_new_path(cr)
        cairo_rectangle(cr, 0, 0, ext.x_advance + 2 * pad, size + 2 * pad)
        set(cr, style.labelBackground)
        cairo_fill(cr)
        set(cr, style.labelTextColor)
        cairo_move_to(cr, pad, pad + size * 0.8)
        cairo_show_text(cr, text)
    }

    func drawViewfinder(_ cr: OpaquePointer, frame: Size, region: PixelRect) {
        let radius = min(style.viewfinderCornerRadius, Double(min(region.width, region.height)) / 2)
        if let mask = style.maskColor {
            cairo_new_path(cr)
            cairo_rectangle(cr, 0, 0, Double(frame.width), Double(frame.height))
            roundedRect(cr, region, radius: radius)
            cairo_set_fill_rule(cr, CAIRO_FILL_RULE_EVEN_ODD)
            set(cr, mask)
            cairo_fill(cr)
            cairo_set_fill_rule(cr, CAIRO_FILL_RULE_WINDING)
        }
        if let line = style.viewfinderLineColor, style.viewfinderLineWidth > 0 {
            cairo_new_path(cr)
            roundedRect(cr, region, radius: radius)
            set(cr, line)
            cairo_set_line_width(cr, style.viewfinderLineWidth)
            cairo_stroke(cr)
        }
    }

    /// Outlines sit outside the code, clear of its edges and quiet zone, so that the annotated recording still
    /// scans.
    func drawCode(_ cr: OpaquePointer, _ d: Detection) {
        if let box = style.boxColor {
            let margin = style.boxLineWidth / 2 + 1
            let gx = margin + style.outlineGap * Double(d.bounds.width)
            let gy = margin + style.outlineGap * Double(d.bounds.height)
            cairo_new_path(cr)
            cairo_rectangle(
                cr, Double(d.bounds.x) - gx, Double(d.bounds.y) - gy, Double(d.bounds.width) + 2 * gx,
                Double(d.bounds.height) + 2 * gy)
            fillAndStroke(cr, box, width: style.boxLineWidth, fillAlpha: style.boxFillAlpha)
        }
        if let poly = style.polygonColor, d.polygon.count >= 2 {
            let outline = Self.grow(d.polygon, fraction: style.outlineGap, margin: style.polygonLineWidth / 2 + 1)
            cairo_new_path(cr)
            cairo_move_to(cr, outline[0].x, outline[0].y)
            for p in outline.dropFirst() { cairo_line_to(cr, p.x, p.y) }
            cairo_close_path(cr)
            fillAndStroke(cr, poly, width: style.polygonLineWidth, fillAlpha: style.polygonFillAlpha)
        }
    }

    /// Grows a quadrilateral (TL, BL, BR, TR) along its own two axes by `fraction` of each side plus `margin`
    /// pixels; other polygons grow from their centroid by `margin`.
    static func grow(_ polygon: [Point], fraction: Double, margin: Double) -> [Point] {
        let n = Double(polygon.count)
        let c = Point(polygon.map(\.x).reduce(0, +) / n, polygon.map(\.y).reduce(0, +) / n)
        guard polygon.count == 4 else {
            return polygon.map { p in
                let dx = p.x - c.x
                let dy = p.y - c.y
                let len = (dx * dx + dy * dy).squareRoot()
                return len > 0 ? Point(p.x + dx / len * margin, p.y + dy / len * margin) : p
            }
        }
        return polygon.map { p in
            // Each corner moves along the two edges that meet there, away from the opposite corners.
            let rel = p - c
            let a = (polygon[3] - polygon[0] + polygon[2] - polygon[1])  // twice the mean horizontal-ish edge
            let b = (polygon[1] - polygon[0] + polygon[2] - polygon[3])  // twice the mean vertical-ish edge
            func unit(_ v: Point) -> Point {
                let l = (v.x * v.x + v.y * v.y).squareRoot()
                return l > 0 ? Point(v.x / l, v.y / l) : Point(0, 0)
            }
            let ua = unit(a)
            let ub = unit(b)
            let la = (a.x * a.x + a.y * a.y).squareRoot() / 2
            let lb = (b.x * b.x + b.y * b.y).squareRoot() / 2
            let sa: Double = (rel.x * ua.x + rel.y * ua.y) >= 0 ? 1 : -1
            let sb: Double = (rel.x * ub.x + rel.y * ub.y) >= 0 ? 1 : -1
            let da = sa * (fraction * la + margin)
            let db = sb * (fraction * lb + margin)
            return Point(p.x + ua.x * da + ub.x * db, p.y + ua.y * da + ub.y * db)
        }
    }

    /// The label sits above the code (below it when there is no room), clamped inside the frame, on a dark plate
    /// so that it reads on any background.
    /// The label goes above the code, else below it, else beside it: the first place clear of every code (a label
    /// over another code's finder pattern made it unreadable in the recording); above when none is.
    func drawLabel(_ cr: OpaquePointer, _ d: Detection, frame: Size, avoiding codes: [Bounds] = []) {
        let size = style.labelSize > 0 ? style.labelSize : max(12, Double(frame.height) / 40)
        let text = d.data.count > 48 ? String(d.data.prefix(47)) + "…" : d.data
        let label = style.labelFormat.replacingOccurrences(of: "{data}", with: text)
            .replacingOccurrences(of: "{type}", with: d.type).replacingOccurrences(
                of: "{quality}", with: String(d.quality))
        cairo_select_font_face(cr, style.labelFont, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD)
        cairo_set_font_size(cr, size)
        var ext = cairo_text_extents_t()
        cairo_text_extents(cr, label, &ext)
        let pad = size * 0.3
        let w = ext.x_advance + 2 * pad
        let h = size + 2 * pad
        // Clear of the outlines, which stand `outlineGap` away from the code.
        let line = max(style.boxLineWidth, style.polygonLineWidth) + 2
        let gy = style.outlineGap * Double(d.bounds.height) + line
        let gx = style.outlineGap * Double(d.bounds.width) + line
        let b = d.bounds
        func clamped(_ x: Double, _ y: Double) -> (Double, Double) {
            (max(0, min(x, Double(frame.width) - w)), max(0, min(y, Double(frame.height) - h)))
        }
        let candidates = [
            clamped(Double(b.x), Double(b.y) - gy - h), clamped(Double(b.x), Double(b.maxY) + gy),
            clamped(Double(b.maxX) + gx, Double(b.y)), clamped(Double(b.x) - gx - w, Double(b.y)),
        ]
        func clear(_ c: (Double, Double)) -> Bool {
            let r = PixelRect(x: Int(c.0), y: Int(c.1), width: Int(w.rounded(.up)), height: Int(h.rounded(.up)))
            return !codes.contains { $0.intersects(r) }
        }
        let (x, y) = candidates.first(where: clear) ?? candidates[0]
        cairo_new_path(cr)
        cairo_rectangle(cr, x, y, w, h)
        set(cr, style.labelBackground)
        cairo_fill(cr)
        set(cr, style.labelTextColor)
        cairo_move_to(cr, x + pad, y + pad + size * 0.8)
        cairo_show_text(cr, label)
    }

    private func fillAndStroke(_ cr: OpaquePointer, _ color: Color, width: Double, fillAlpha: Double) {
        if fillAlpha > 0 {
            set(cr, color.withAlpha(color.alpha * fillAlpha))
            cairo_fill_preserve(cr)
        }
        guard width > 0 else { return cairo_new_path(cr) }
        set(cr, color)
        cairo_set_line_width(cr, width)
        cairo_stroke(cr)
    }

    private func roundedRect(_ cr: OpaquePointer, _ r: PixelRect, radius: Double) {
        let x = Double(r.x)
        let y = Double(r.y)
        let w = Double(r.width)
        let h = Double(r.height)
        guard radius > 0 else {
            cairo_rectangle(cr, x, y, w, h)
            return
        }
        cairo_new_sub_path(cr)
        cairo_arc(cr, x + w - radius, y + radius, radius, -Double.pi / 2, 0)
        cairo_arc(cr, x + w - radius, y + h - radius, radius, 0, Double.pi / 2)
        cairo_arc(cr, x + radius, y + h - radius, radius, Double.pi / 2, Double.pi)
        cairo_arc(cr, x + radius, y + radius, radius, Double.pi, 3 * Double.pi / 2)
        cairo_close_path(cr)
    }

    private func set(_ cr: OpaquePointer, _ c: Color) { cairo_set_source_rgba(cr, c.red, c.green, c.blue, c.alpha) }
}
