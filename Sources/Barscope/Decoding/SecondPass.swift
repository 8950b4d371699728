import Foundation

/// What a still gets when the first read finds nothing: each pass a new image (one or more steps), read again by
/// the same engines.
struct SecondPass: Equatable {
    enum Step: Equatable {
        case scaled(Double)
        case rotated(Double)
        case stretched
        case inverted
        case binarized
        case sharpened
    }
    var steps: [Step]

    static let plan = "down,up,rot,stretch,invert,bin,sharp,sharp+bin,up+sharp,rot+bin,down+bin,up+bin,stretch+sharp"

    /// The passes to try on this image, in order (upscaling only for images up to 1600 pixels).
    static func order(for image: LumaImage) -> [SecondPass] {
        var out: [SecondPass] = []
        let big = max(image.width, image.height) > 1600
        // Measured on the real-photo set (each kept because it reads codes no earlier pass did); cheap ones first.
        for token in Self.plan.split(separator: ",") {
            var chains: [[Step]] = [[]]
            for p in token.split(separator: "+") {
                let options: [Step]
                switch p {
                case "down": options = [.scaled(0.5)]
                case "up": options = big ? [] : [.scaled(2)]
                case "rot": options = [30, -30, 45, -45, 60, -60].map { .rotated($0) }
                case "stretch": options = [.stretched]
                case "invert": options = [.inverted]
                case "bin": options = [.binarized]
                case "sharp": options = [.sharpened]
                default: options = []
                }
                chains = options.isEmpty ? [] : chains.flatMap { c in options.map { c + [$0] } }
            }
            out += chains.filter { !$0.isEmpty }.map { SecondPass(steps: $0) }
        }
        return out
    }

    /// The size of the image this pass makes from one of `width` × `height`, without making it: what the budget
    /// counts before the work is done (the same sizes as `apply`, from the same functions).
    func outputSize(width: Int, height: Int) -> (width: Int, height: Int) {
        var size = (width: width, height: height)
        for step in steps {
            switch step {
            case .scaled(let f): size = TransformedLuma.scaledSize(width: size.width, height: size.height, by: f)
            case .rotated(let d): size = TransformedLuma.rotatedSize(width: size.width, height: size.height, degrees: d)
            case .stretched, .inverted, .binarized, .sharpened: break
            }
        }
        return size
    }

    func apply(to image: LumaImage) -> TransformedLuma {
        var current = Self.apply(steps[0], to: image)
        for step in steps.dropFirst() {
            let next = current.withImage { Self.apply(step, to: $0) }
            let outer = current.toSource
            let inner = next.toSource
            current = TransformedLuma(
                pixels: next.pixels, width: next.width, height: next.height,
                toSource: { outer(inner($0)) })
        }
        return current
    }

    private static func apply(_ step: Step, to image: LumaImage) -> TransformedLuma {
        switch step {
        case .scaled(let f): return .scaled(image, by: f)
        case .rotated(let d): return .rotated(image, degrees: d)
        case .inverted: return .remapped(image, (0...255).map { UInt8(255 - $0) })
        case .binarized: return .binarized(image)
        case .sharpened: return .sharpened(image)
        case .stretched: return .stretched(image)
        }
    }
}
