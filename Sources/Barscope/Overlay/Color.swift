/// An RGBA colour, components in 0...1, written `#RRGGBB` or `#RRGGBBAA`.
public struct Color: Hashable, Sendable, CustomStringConvertible {
    public var red: Double
    public var green: Double
    public var blue: Double
    public var alpha: Double

    public init(red: Double, green: Double, blue: Double, alpha: Double = 1) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// Parses `#RRGGBB` or `#RRGGBBAA` (the `#` is optional).
    public init?(hex text: String) {
        let s = text.hasPrefix("#") ? String(text.dropFirst()) : text
        guard s.count == 6 || s.count == 8, let v = UInt32(s, radix: 16) else { return nil }
        let full = s.count == 6 ? (v << 8) | 0xff : v
        self.init(
            red: Double((full >> 24) & 0xff) / 255, green: Double((full >> 16) & 0xff) / 255,
            blue: Double((full >> 8) & 0xff) / 255, alpha: Double(full & 0xff) / 255)
    }

    public func withAlpha(_ a: Double) -> Color { Color(red: red, green: green, blue: blue, alpha: a) }

    public var description: String {
        func h(_ v: Double) -> String {
            let s = String(Int((v * 255).rounded()), radix: 16, uppercase: true)
            return s.count == 1 ? "0" + s : s
        }
        return "#" + h(red) + h(green) + h(blue) + h(alpha)
    }

    public static let white = Color(red: 1, green: 1, blue: 1)
    public static let black = Color(red: 0, green: 0, blue: 0)
}
