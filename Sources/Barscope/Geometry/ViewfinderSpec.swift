extension Viewfinder {
    /// Builds a viewfinder from its textual settings, as the element's properties and pipeline files give them.
    /// - Parameters:
    ///   - aspect: `off` or `W:H`.
    ///   - insets: `N` or `top,left,bottom,right` in pixels, each ≥ 0.
    ///   - region: MicroBlink's normalised `x,y,w,h`, or nil; it replaces aspect and insets.
    /// - Throws: ``BarscopeError/badValue`` naming the value that cannot work.
    public static func parse(aspect: String, insets: String = "20", region: String? = nil) throws -> Viewfinder {
        if let region, !region.isEmpty {
            let parts = region.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 4, let x = parts[0], let y = parts[1], let w = parts[2], let h = parts[3],
                let n = NormalizedRegion(x: x, y: y, width: w, height: h)
            else {
                throw BarscopeError.badValue(
                    "region '\(region)': expected x,y,w,h as fractions of the frame, inside 0..1 (0.1,0.2,0.8,0.6)")
            }
            return Viewfinder(normalizedRegion: n)
        }
        return try parse(aspect: aspect, insets: try parseInsets(insets))
    }

    /// Builds a viewfinder from its aspect text and insets already held as values (a live `viewfinder` command keeps
    /// the current insets: they never pass through their description).
    public static func parse(aspect: String, insets: EdgeInsets) throws -> Viewfinder {
        if aspect == "off" || aspect == "none" { return .off }
        guard let ratio = AspectRatio(parsing: aspect) else {
            throw BarscopeError.badValue(
                "viewfinder '\(aspect)': expected W:H with both sides positive (4:3), or 'off'")
        }
        return Viewfinder(aspectRatio: ratio, minimumInset: insets)
    }

    /// `N` or `top,left,bottom,right`.
    public static func parseInsets(_ text: String) throws -> EdgeInsets {
        let parts = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.allSatisfy({ $0 != nil && $0! >= 0 && $0!.isFinite }) else {
            throw BarscopeError.badValue("insets '\(text)': expected N or top,left,bottom,right, each ≥ 0 pixels")
        }
        let v = parts.map { $0! }
        switch v.count {
        case 1: return EdgeInsets(all: v[0])
        case 4: return EdgeInsets(top: v[0], left: v[1], bottom: v[2], right: v[3])
        default: throw BarscopeError.badValue("insets '\(text)': expected N or top,left,bottom,right, each ≥ 0 pixels")
        }
    }
}

#if canImport(Foundation)
    import Foundation
#endif
