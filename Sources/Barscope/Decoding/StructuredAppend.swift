/// Where a code stands in a structured append: one message split over up to 16 QR codes, each naming its position,
/// the count and the parity (the XOR of the whole message's bytes) that ties the parts together.
public struct StructuredAppend: Hashable, Sendable {
    /// 0-based position of this part; nil on the joined message (``StructuredAppend/join(_:)``).
    public var index: Int?
    /// How many parts the message has.
    public var count: Int
    /// What ties the parts together, as zxing-cpp gives it (QR: the parity byte, in decimal); nil when no engine
    /// said (ZBar does not expose it).
    public var id: String?

    public init(index: Int?, count: Int, id: String?) {
        self.index = index
        self.count = count
        self.id = id
    }

    /// The messages whose every part is among `reads` (from one image or several), each joined into one
    /// detection: the parts' texts in index order, type and count and parity as theirs, `index` nil, no place of
    /// its own (no polygon: the parts may lie in different images). Parts are grouped by type, count and parity;
    /// the same part read twice (two images, two engines) counts once, and a group where one index has two
    /// different texts is not joined.
    public static func join(_ reads: [Detection]) -> [Detection] {
        struct Key: Hashable {
            let type: String
            let count: Int
            let id: String?
        }
        var groups: [Key: [Int: Detection]] = [:]
        var order: [Key] = []
        var conflicting = Set<Key>()
        for d in reads {
            guard let s = d.sequence, let index = s.index, s.count > 1, index >= 0, index < s.count else { continue }
            let key = Key(type: d.type, count: s.count, id: s.id)
            if groups[key] == nil { order.append(key) }
            if let seen = groups[key]?[index] {
                if seen.data != d.data || seen.binary != d.binary { conflicting.insert(key) }
            } else {
                groups[key, default: [:]][index] = d
            }
        }
        return order.compactMap { key in
            guard !conflicting.contains(key), let parts = groups[key], parts.count == key.count else { return nil }
            let bytes = (0..<key.count).flatMap { i -> [UInt8] in
                let part = parts[i]!
                return part.binary ?? Array(part.data.utf8)
            }
            let text = String(validating: bytes, as: UTF8.self)
            var joined = Detection(
                type: key.type, data: text ?? String(decoding: bytes, as: UTF8.self),
                quality: (0..<key.count).map { parts[$0]!.quality }.min() ?? 0, polygon: [])
            if text == nil { joined.binary = bytes }
            joined.engine = parts[0]!.engine
            joined.sequence = StructuredAppend(index: nil, count: key.count, id: key.id)
            return joined
        }
    }
}
