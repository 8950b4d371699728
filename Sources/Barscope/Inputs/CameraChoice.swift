/// The caps a camera is asked for: one format, size and rate out of what it offers, put in a `capsfilter`
/// right after `v4l2src`.
///
/// The rule, without a request: the largest size, at the highest rate up to 30 frames/s, raw before MJPG at
/// equal size and rate (MJPG costs a `jpegdec`, but is often all that gives a large size at a full rate over
/// USB 2). A requested size, rate or format must be offered exactly (a rate within 0.1 frames/s, so 30 takes a
/// 30000/1001 camera); the rest is chosen by the same rule.
public struct CameraChoice: Sendable, Equatable, CustomStringConvertible {
    public var format: String
    public var size: Size
    public var rate: CameraMode.Rate

    /// The caps for the `capsfilter` after `v4l2src`.
    public var caps: String {
        let dims = "width=\(size.width),height=\(size.height),framerate=\(rate.numerator)/\(rate.denominator)"
        return format == "MJPG" ? "image/jpeg,\(dims)" : "video/x-raw,format=\(format),\(dims)"
    }

    /// MJPG frames are decoded by `jpegdec` before anything else sees them.
    public var needsJPEGDecoder: Bool { format == "MJPG" }

    public var description: String { "\(size.width)x\(size.height) at \(rate) fps in \(format)" }

    /// Picks the caps for `request` from what `device` offers. Pure: the modes come from the device's caps
    /// (``CameraProbe``) or, in tests, from a caps string.
    /// - Throws: ``BarscopeError/badInput`` naming the device, what was asked and what it does offer.
    public static func choose(from offered: [CameraMode], request: CameraRequest, device: String) throws -> CameraChoice
    {
        guard !offered.isEmpty else {
            throw BarscopeError.badInput("\(device): offers no raw or MJPG video (nothing barscope can decode)")
        }
        let modes = offered.filter { request.format == nil || $0.format == request.format }
        guard !modes.isEmpty else {
            throw BarscopeError.badInput(
                "\(device): cannot give \(request.format ?? "")"
                    + "; it offers \(Self.formats(offered).joined(separator: ", "))")
        }
        var best: (choice: CameraChoice, key: [Double])? = nil
        for (index, mode) in modes.enumerated() {
            guard let size = Self.size(in: mode, request: request.size),
                let rate = Self.rate(in: mode, request: request.fps)
            else { continue }
            // Larger first, then the rate closest to 30 from below (above 30 only when nothing is at or under it),
            // then raw, then the device's own order.
            let rateKey = rate.value <= 30.01 ? rate.value : -rate.value
            let key = [Double(size.width * size.height), rateKey, mode.isRaw ? 1 : 0, -Double(index)]
            if best == nil || best!.key.lexicographicallyPrecedes(key) {
                best = (CameraChoice(format: mode.format, size: size, rate: rate), key)
            }
        }
        guard let best else {
            throw BarscopeError.badInput(
                "\(device): cannot give \(request.description); it offers \(Self.offers(offered))")
        }
        return best.choice
    }

    /// The size this mode gives for the request: the requested one if it is in range, else the largest.
    static func size(in mode: CameraMode, request: Size?) -> Size? {
        guard let request else { return Size(width: mode.width.upperBound, height: mode.height.upperBound) }
        return mode.width.contains(request.width) && mode.height.contains(request.height) ? request : nil
    }

    /// The rate this mode gives for the request: the requested one (within 0.1 frames/s), else the highest up to
    /// 30, else the lowest above it.
    static func rate(in mode: CameraMode, request: Int?) -> CameraMode.Rate? {
        if let range = mode.rateRange {
            if let request {
                let r = CameraMode.Rate(request)
                return range.contains(r) ? r : nil
            }
            if range.lowerBound.value > 30 { return range.lowerBound }
            return min(range.upperBound, CameraMode.Rate(30))
        }
        if let request {
            return mode.rates.filter { abs($0.value - Double(request)) < 0.1 }
                .min { abs($0.value - Double(request)) < abs($1.value - Double(request)) }
        }
        return mode.rates.filter { $0.value <= 30.01 }.max() ?? mode.rates.min()
    }

    /// The formats offered, in the device's order, each once.
    static func formats(_ modes: [CameraMode]) -> [String] {
        var seen: [String] = []
        for m in modes where !seen.contains(m.format) { seen.append(m.format) }
        return seen
    }

    /// What a device offers, in one line: "1280x720 at 30, 640x480 at 30/15 fps (YUY2, MJPG)" when every format
    /// gives the same sizes and rates, else format by format ("YUY2 1280x720 at 10 fps; MJPG 1280x720 at 30 fps").
    public static func offers(_ modes: [CameraMode]) -> String {
        func sizes(_ ms: [CameraMode]) -> String {
            // Size → rates, largest size first; a range of sizes or rates is shown as one.
            var order: [String] = []
            var area: [String: Int] = [:]
            var rates: [String: [String]] = [:]
            for m in ms {
                let size =
                    m.width.count == 1 && m.height.count == 1
                    ? "\(m.width.lowerBound)x\(m.height.lowerBound)"
                    : "\(m.width.lowerBound)x\(m.height.lowerBound) to \(m.width.upperBound)x\(m.height.upperBound)"
                if rates[size] == nil {
                    order.append(size)
                    area[size] = m.width.upperBound * m.height.upperBound
                }
                let r =
                    m.rateRange.map { ["\($0.lowerBound)-\($0.upperBound)"] }
                    ?? m.rates.sorted(by: >).map(\.description)
                for text in r where !(rates[size] ?? []).contains(text) { rates[size, default: []].append(text) }
            }
            let sorted = order.enumerated().sorted { a, b in
                area[a.element]! != area[b.element]! ? area[a.element]! > area[b.element]! : a.offset < b.offset
            }.map(\.element)
            return sorted.map { "\($0) at \(rates[$0]!.joined(separator: "/"))" }.joined(separator: ", ") + " fps"
        }
        let formats = Self.formats(modes)
        let perFormat = formats.map { f in sizes(modes.filter { $0.format == f }) }
        if Set(perFormat).count == 1 { return "\(perFormat[0]) (\(formats.joined(separator: ", ")))" }
        return zip(formats, perFormat).map { "\($0) \($1)" }.joined(separator: "; ")
    }
}
