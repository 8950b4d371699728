import Foundation

/// `{"set": {"SECTION.KEY": value}}`: the values as the command line would spell them.
struct CreateBody: Decodable {
    var set: [String: Scalar]?

    enum Scalar: Decodable {
        case text(String)
        init(from decoder: Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let b = try? c.decode(Bool.self) {
                self = .text(b ? "true" : "false")
            } else if let i = try? c.decode(Int.self) {
                self = .text(String(i))
            } else if let d = try? c.decode(Double.self) {
                self = .text(String(d))
            } else {
                self = .text(try c.decode(String.self))
            }
        }
        var text: String {
            switch self {
            case .text(let t): return t
            }
        }
    }
}
