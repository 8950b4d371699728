import CGStreamer

/// One way a camera can deliver frames, as its `v4l2src` source pad's caps state it: a pixel format at a size
/// and a frame rate, each a single value or a range (stepwise devices give ranges).
public struct CameraMode: Sendable, Equatable, CustomStringConvertible {
    /// A frame rate as GStreamer states it, a fraction (30/1, 30000/1001, 15/2).
    public struct Rate: Sendable, Hashable, Comparable, CustomStringConvertible {
        public var numerator: Int
        public var denominator: Int
        public init(_ numerator: Int, _ denominator: Int = 1) {
            self.numerator = numerator
            self.denominator = max(1, denominator)
        }
        public var value: Double { Double(numerator) / Double(denominator) }
        public static func < (a: Rate, b: Rate) -> Bool { a.value < b.value }
        /// "30", "29.97", "7.5".
        public var description: String {
            if numerator % denominator == 0 { return String(numerator / denominator) }
            let text = String(Double(Int((value * 100).rounded())) / 100)
            return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
        }
    }

    /// The raw format name (`YUY2`, `NV12`, ...) or `MJPG` for `image/jpeg`.
    public var format: String
    public var width: ClosedRange<Int>
    public var height: ClosedRange<Int>
    /// The rates offered: listed ones, or one range (`minimum...maximum`) for a continuous device.
    public var rates: [Rate]
    public var rateRange: ClosedRange<Rate>?

    public init(
        format: String, width: ClosedRange<Int>, height: ClosedRange<Int>, rates: [Rate],
        rateRange: ClosedRange<Rate>? = nil
    ) {
        self.format = format
        self.width = width
        self.height = height
        self.rates = rates
        self.rateRange = rateRange
    }

    /// Compressed (MJPG) frames need `jpegdec`; raw ones go straight to `videoconvert`.
    public var isRaw: Bool { format != "MJPG" }

    public var description: String {
        let size =
            width.count == 1 && height.count == 1
            ? "\(width.lowerBound)x\(height.lowerBound)"
            : "\(width.lowerBound)x\(height.lowerBound)-\(width.upperBound)x\(height.upperBound)"
        let r =
            rateRange.map { "\($0.lowerBound)-\($0.upperBound)" }
            ?? rates.sorted(by: >).map(\.description).joined(separator: "/")
        return "\(format) \(size) at \(r) fps"
    }

    /// The modes of a caps string, as `gst_pad_query_caps` on a camera's pad gives them (`gst-inspect-1.0` and
    /// `gst-device-monitor-1.0` print the same). Structures other than raw video and JPEG (H.264 cameras) are
    /// left out: the graph decodes only those two.
    /// - Throws: ``BarscopeError/badValue`` when the text is not caps.
    public static func modes(caps text: String) throws -> [CameraMode] {
        GStreamer.initialize()
        guard let caps = gst_caps_from_string(text) else {
            throw BarscopeError.badValue("'\(text)': not GStreamer caps")
        }
        defer { gst_caps_unref(caps) }
        return modes(caps: caps)
    }

    /// The modes of caps (borrowed). Lists (`{ 30/1, 15/1 }`) are expanded, ranges kept.
    static func modes(caps: UnsafeMutablePointer<GstCaps>) -> [CameraMode] {
        // Normalising turns every list into one structure per value, so each field is a value or a range.
        guard let normal = gst_caps_normalize(gst_caps_copy(caps)) else { return [] }
        defer { gst_caps_unref(normal) }
        var found: [CameraMode] = []
        for i in 0..<gst_caps_get_size(normal) {
            guard let s = gst_caps_get_structure(normal, i) else { continue }
            let media = String(cString: gst_structure_get_name(s))
            let format: String
            if media == "image/jpeg" {
                format = "MJPG"
            } else if media == "video/x-raw", let f = gst_structure_get_string(s, "format") {
                format = String(cString: f)
            } else {
                continue
            }
            guard let width = intField(s, "width"), let height = intField(s, "height") else { continue }
            var mode = CameraMode(format: format, width: width, height: height, rates: [])
            guard let value = gst_structure_get_value(s, "framerate") else { continue }
            if value.pointee.g_type == gst_fraction_get_type() {
                let rate = Rate(
                    Int(gst_value_get_fraction_numerator(value)), Int(gst_value_get_fraction_denominator(value)))
                // 0/1 is "variable"; it cannot be asked for.
                guard rate.numerator > 0 else { continue }
                mode.rates = [rate]
            } else if value.pointee.g_type == gst_fraction_range_get_type(),
                let low = gst_value_get_fraction_range_min(value), let high = gst_value_get_fraction_range_max(value)
            {
                let a = Rate(Int(gst_value_get_fraction_numerator(low)), Int(gst_value_get_fraction_denominator(low)))
                let b = Rate(Int(gst_value_get_fraction_numerator(high)), Int(gst_value_get_fraction_denominator(high)))
                guard b.numerator > 0, a <= b else { continue }
                mode.rateRange = max(a, Rate(1, 1000))...b
            } else {
                continue
            }
            // Modes that differ only in fields we do not ask for (colorimetry, interlacing) are one mode here.
            if let same = found.firstIndex(where: {
                $0.format == mode.format && $0.width == mode.width && $0.height == mode.height
                    && $0.rateRange == mode.rateRange
            }), mode.rateRange == nil {
                found[same].rates = Array(Set(found[same].rates + mode.rates)).sorted(by: >)
            } else if !found.contains(mode) {
                found.append(mode)
            }
        }
        return found
    }

    /// An int field as a range: a value is a range of one.
    private static func intField(_ s: UnsafeMutablePointer<GstStructure>, _ name: String) -> ClosedRange<Int>? {
        guard let value = gst_structure_get_value(s, name) else { return nil }
        if value.pointee.g_type == gst_int_range_get_type() {
            let low = Int(gst_value_get_int_range_min(value))
            let high = Int(gst_value_get_int_range_max(value))
            return low <= high ? low...high : nil
        }
        var v: gint = 0
        return gst_structure_get_int(s, name, &v) != 0 ? Int(v)...Int(v) : nil
    }
}
