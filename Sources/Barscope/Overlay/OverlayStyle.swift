/// How the overlay looks. Defaults follow the seeds: Scanbot's view finder (white 2 px outline, 8 px corners,
/// black mask at 0.66) and the AVFoundation tutorial (green bounding box, blue corner polygon, half-transparent fill).
public struct OverlayStyle: Hashable, Sendable {
    public var viewfinderLineColor: Color? = .white
    public var viewfinderLineWidth: Double = 2
    public var viewfinderCornerRadius: Double = 8
    public var maskColor: Color? = Color(red: 0, green: 0, blue: 0, alpha: 0.66)

    public var boxColor: Color? = Color(red: 0, green: 1, blue: 0)
    public var boxLineWidth: Double = 2
    public var polygonColor: Color? = Color(red: 0, green: 0, blue: 1)
    public var polygonLineWidth: Double = 2
    /// Alpha of the fill inside the bounding box and inside the corner polygon (outlines stay opaque).
    /// The tutorial fills both at 0.5; stacked, that leaves a quarter of the code's contrast and the annotated
    /// recording no longer scans, so by default only the polygon is filled, lightly.
    public var boxFillAlpha: Double = 0
    public var polygonFillAlpha: Double = 0.25
    /// Gap between a code and its outlines, as a fraction of the code's extent along each axis (plus half a
    /// line): a dark line hugging a QR finder pattern, or standing in an EAN's quiet zone (11 of 95 modules),
    /// makes the annotated recording unreadable.
    public var outlineGap: Double = 0.12

    public var labelFont: String = "Sans"
    /// Label text height in pixels; 0 scales with the frame (height / 40).
    public var labelSize: Double = 0
    public var labelTextColor: Color = .white
    public var labelBackground: Color = Color(red: 0, green: 0, blue: 0, alpha: 0.7)
    public var showLabels: Bool = true
    /// The label's text: `{data}`, `{type}`, `{quality}` are replaced.
    public var labelFormat: String = "{data}  ·  {type}"
    /// A status line (frame, codes in view, codes seen, frames per second) in the top-left corner.
    public var showStatus: Bool = true

    public init() {}

    /// The names `set(_:to:)` accepts, for help texts and error messages.
    public static let keys = [
        "line-color", "line-width", "corner-radius", "mask-color", "box-color", "box-width", "box-fill",
        "polygon-color", "polygon-width", "polygon-fill", "outline-gap", "font", "label-size", "label-color",
        "label-background", "labels", "label-format", "status",
    ]

    /// Sets one style value from its text form, as `--style KEY=VALUE` and pipeline files give it. Colours are
    /// `#RRGGBB` or `#RRGGBBAA` (`none` hides that part), sizes are pixels, fills and the gap fractions in 0...1.
    /// - Throws: ``BarscopeError/badValue`` naming the key and value.
    public mutating func set(_ key: String, to value: String) throws {
        func bad(_ expected: String) -> BarscopeError {
            .badValue("style \(key)='\(value)': expected \(expected)")
        }
        func color() throws -> Color? {
            if value == "none" { return nil }
            guard let c = Color(hex: value) else { throw bad("#RRGGBB, #RRGGBBAA or none") }
            return c
        }
        func number(_ range: ClosedRange<Double>) throws -> Double {
            guard let v = Double(value), v.isFinite, range.contains(v) else {
                throw bad("a number in \(range.lowerBound)...\(range.upperBound)")
            }
            return v
        }
        func flag() throws -> Bool {
            switch value {
            case "on", "true", "yes", "1": return true
            case "off", "false", "no", "0": return false
            default: throw bad("on or off")
            }
        }
        switch key {
        case "line-color": viewfinderLineColor = try color()
        case "line-width": viewfinderLineWidth = try number(0...100)
        case "corner-radius": viewfinderCornerRadius = try number(0...1000)
        case "mask-color": maskColor = try color()
        case "box-color": boxColor = try color()
        case "box-width": boxLineWidth = try number(0...100)
        case "box-fill": boxFillAlpha = try number(0...1)
        case "polygon-color": polygonColor = try color()
        case "polygon-width": polygonLineWidth = try number(0...100)
        case "polygon-fill": polygonFillAlpha = try number(0...1)
        case "outline-gap": outlineGap = try number(0...1)
        case "font":
            guard !value.isEmpty else { throw bad("a font family name") }
            labelFont = value
        case "label-size": labelSize = try number(0...500)
        case "label-color":
            guard let c = try color() else { throw bad("#RRGGBB or #RRGGBBAA") }
            labelTextColor = c
        case "label-background": labelBackground = try color() ?? Color(red: 0, green: 0, blue: 0, alpha: 0)
        case "labels": showLabels = try flag()
        case "label-format": labelFormat = value
        case "status": showStatus = try flag()
        default:
            throw BarscopeError.badValue(
                "style '\(key)': unknown (one of \(Self.keys.joined(separator: ", ")))")
        }
    }

    /// Applies `key=value` pairs separated by `;` or newlines (the element's `style` property).
    public mutating func apply(_ text: String) throws {
        for item in text.split(whereSeparator: { $0 == ";" || $0 == "\n" }) {
            let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, !pair[0].isEmpty else {
                throw BarscopeError.badValue("style '\(item)': expected KEY=VALUE")
            }
            try set(pair[0], to: pair[1])
        }
    }
}

#if canImport(Foundation)
    import Foundation
#endif
