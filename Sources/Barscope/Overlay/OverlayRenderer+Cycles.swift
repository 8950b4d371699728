import CCairo

extension OverlayRenderer {
    /// A read cycle on the picture: while one is open, an amber border and its label; for a second after one
    /// closes, a border in the verdict's colour and the verdict (GOOD and its codes, NOREAD, MULTIPLE, MISMATCH).
    func drawCycle(_ cr: OpaquePointer, frame: Size, open: Bool, label: String?, last: CycleResult?) {
        let color: (Double, Double, Double)
        var text: String
        if let last {
            switch last.outcome {
            case .good: color = (0.15, 0.75, 0.3)
            case .noread: color = (0.9, 0.15, 0.15)
            case .multiple: color = (1.0, 0.55, 0.0)
            case .mismatch: color = (0.85, 0.2, 0.85)
            }
            text = "cycle \(last.cycle)\(last.label.map { " " + $0 } ?? ""): \(last.outcome.rawValue.uppercased())"
            if !last.codes.isEmpty { text += "  " + last.codes.map(\.data).joined(separator: ", ") }
        } else if open {
            color = (1.0, 0.75, 0.0)
            text = "cycle open" + (label.map { ": " + $0 } ?? "")
        } else {
            return
        }
        cairo_save(cr)
        defer { cairo_restore(cr) }
        let width = max(4, Double(frame.height) / 90)
        cairo_set_source_rgb(cr, color.0, color.1, color.2)
        cairo_set_line_width(cr, width)
        cairo_rectangle(cr, width / 2, width / 2, Double(frame.width) - width, Double(frame.height) - width)
        cairo_stroke(cr)
        let size = max(12, Double(frame.height) / 40)
        cairo_select_font_face(cr, style.labelFont, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD)
        cairo_set_font_size(cr, size)
        var ext = cairo_text_extents_t()
        cairo_text_extents(cr, text, &ext)
        let pad = size * 0.4
        let y = Double(frame.height) - width - size - 2 * pad
        cairo_rectangle(cr, width, y, ext.x_advance + 2 * pad, size + 2 * pad)
        cairo_fill(cr)
        cairo_set_source_rgb(cr, 0, 0, 0)
        cairo_move_to(cr, width + pad, y + pad + size * 0.8)
        cairo_show_text(cr, text)
    }
}
