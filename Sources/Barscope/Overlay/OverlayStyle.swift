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

    public init() {}
}
