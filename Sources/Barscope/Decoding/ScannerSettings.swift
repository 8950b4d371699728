import CZBar
import CZXingReader

/// Decoder settings in `zbarimg -S` syntax (`disable`, `qrcode.enable`, `i25.disable`, `ean13.enable=0`, ...),
/// validated once and applied to every ZBar scanner of a run. They choose zxing-cpp's formats too, so both engines
/// look for the same codes; the formats only zxing-cpp reads have names of their own here (`datamatrix`, `aztec`,
/// `microqr`, `maxicode`; `pdf417` is ZBar's name), on by default, off after `disable`.
public struct ScannerSettings: Hashable, Sendable {
    /// One parsed `-S` value: symbology (0 = all), config, value.
    struct Entry: Hashable, Sendable {
        var symbology: Int32
        var config: Int32
        var value: Int32
    }
    public private(set) var configs: [String] = []
    var entries: [Entry] = []
    /// The formats only zxing-cpp reads (zxing-cpp bits), after `disable` and their own `-S` values, in order.
    private var zxingOnly = Self.zxingOnlyDefault

    public init() {}

    /// Parses `-S` values in order, as zbarimg applies them.
    /// - Throws: ``BarscopeError/badValue`` naming the first value ZBar does not understand.
    public init(_ configs: [String]) throws {
        for c in configs { try add(c) }
    }

    /// Adds one `-S` value (`zbar_parse_config`, or one of zxing-cpp's own format names).
    public mutating func add(_ config: String) throws {
        if let (bit, on) = Self.parseZXingOnly(config) {
            zxingOnly = on ? zxingOnly | bit : zxingOnly & ~bit
            configs.append(config)
            return
        }
        var sym = ZBAR_NONE
        var cfg = ZBAR_CFG_ENABLE
        var val: Int32 = 0
        let failed = config.withCString { zbar_parse_config($0, &sym, &cfg, &val) } != 0
        if failed || config.isEmpty {
            throw BarscopeError.badValue(
                "-S '\(config)': unknown symbology or setting (zbarimg syntax: "
                    + "'disable', 'qrcode.enable', 'i25.disable', 'ean13.enable=0'; also datamatrix, aztec, microqr, maxicode)"
            )
        }
        configs.append(config)
        entries.append(Entry(symbology: Int32(sym.rawValue), config: Int32(cfg.rawValue), value: val))
        if sym == ZBAR_NONE && cfg == ZBAR_CFG_ENABLE { zxingOnly = val != 0 ? Self.zxingOnlyDefault : 0 }
        if sym == ZBAR_PDF417 && cfg == ZBAR_CFG_ENABLE {
            let bit = UInt32(BS_ZX_PDF417)
            zxingOnly = val != 0 ? zxingOnly | bit : zxingOnly & ~bit
        }
    }

    /// Applies the settings to a ZBar image scanner, after the defaults.
    func apply(to scanner: OpaquePointer) {
        for e in entries {
            zbar_image_scanner_set_config(
                scanner, zbar_symbol_type_t(UInt32(e.symbology)), zbar_config_t(UInt32(e.config)), e.value)
        }
    }

    /// Applies the settings that belong to the bar-width decoder (enabling, checks, lengths; not the image
    /// scanner's uncertainty, positions, inversion or densities) to a ZBar decoder of its own (`ZBarLineDecoder`),
    /// after the defaults.
    func apply(toDecoder decoder: OpaquePointer) {
        for e in entries where e.config < Int32(ZBAR_CFG_UNCERTAINTY.rawValue) {
            zbar_decoder_set_config(
                decoder, zbar_symbol_type_t(UInt32(e.symbology)), zbar_config_t(UInt32(e.config)), e.value)
        }
    }

    /// Whether these settings may change how `type`'s text maps to its bars: a check character added or emitted,
    /// full ASCII, turned on (ZBar's defaults do none of these for I2/5, CODE-39 and Codabar; ZBar 0.23 honours
    /// Codabar's check character, which the text then leaves out).
    func changesCharacters(of type: zbar_symbol_type_t) -> Bool {
        let mapping = [ZBAR_CFG_ADD_CHECK, ZBAR_CFG_EMIT_CHECK, ZBAR_CFG_ASCII].map { Int32($0.rawValue) }
        return entries.contains { e in
            (e.symbology == 0 || e.symbology == Int32(type.rawValue)) && mapping.contains(e.config) && e.value != 0
        }
    }

    /// The formats zxing-cpp looks for: what ZBar has enabled once these settings are applied (asked of a ZBar
    /// scanner, so ZBar's own defaults count), plus the formats only zxing-cpp reads.
    public var zxingFormats: UInt32 {
        let enabled = zbarEnabled()
        var bits = zxingOnly
        for (symbology, zx) in Self.zbarToZXing where enabled.contains(symbology.rawValue) { bits |= zx }
        return bits
    }

    /// ZBar reports UPC-A (and UPC-E, expanded) as EAN-13 with a leading 0 unless `upca.enable` (`upce.enable`).
    public var reportsUPCA: Bool { zbarEnabled().contains(ZBAR_UPCA.rawValue) }
    public var reportsUPCE: Bool { zbarEnabled().contains(ZBAR_UPCE.rawValue) }
    /// zbarimg's binary mode (`-Sbinary`, `-Sqrcode.binary`): payloads' bytes as they are, not converted.
    public var binary: Bool {
        var on = false
        for e in entries where e.config == Int32(ZBAR_CFG_BINARY.rawValue) { on = e.value != 0 }
        return on
    }
    public var reportsISBN10: Bool { zbarEnabled().contains(ZBAR_ISBN10.rawValue) }
    public var reportsISBN13: Bool { zbarEnabled().contains(ZBAR_ISBN13.rawValue) }

    /// The symbologies a ZBar scanner with these settings has enabled.
    private func zbarEnabled() -> Set<UInt32> {
        guard let scanner = zbar_image_scanner_create() else { return [] }
        defer { zbar_image_scanner_destroy(scanner) }
        apply(to: scanner)
        var on = Set<UInt32>()
        // PDF417 is left out: this ZBar is built without it, and asking about it crashes.
        for s in Self.zbarToZXing.map(\.0) + [ZBAR_UPCA, ZBAR_UPCE, ZBAR_ISBN10, ZBAR_ISBN13] {
            var value: Int32 = 0
            if zbar_image_scanner_get_config(scanner, s, ZBAR_CFG_ENABLE, &value) == 0, value != 0 {
                on.insert(s.rawValue)
            }
        }
        return on
    }

    private static let zbarToZXing: [(zbar_symbol_type_t, UInt32)] = [
        // ZBar reads UPC-A and UPC-E as EAN-13 when their own switches are off: zxing-cpp must look for them too.
        (ZBAR_EAN13, UInt32(BS_ZX_EAN13 | BS_ZX_UPCA | BS_ZX_UPCE)), (ZBAR_EAN8, UInt32(BS_ZX_EAN8)),
        (ZBAR_I25, UInt32(BS_ZX_ITF)), (ZBAR_DATABAR, UInt32(BS_ZX_DATABAR)),
        (ZBAR_DATABAR_EXP, UInt32(BS_ZX_DATABAR_EXPANDED)), (ZBAR_CODABAR, UInt32(BS_ZX_CODABAR)),
        (ZBAR_CODE39, UInt32(BS_ZX_CODE39)), (ZBAR_CODE93, UInt32(BS_ZX_CODE93)),
        (ZBAR_CODE128, UInt32(BS_ZX_CODE128)), (ZBAR_QRCODE, UInt32(BS_ZX_QRCODE)),
    ]

    private static let zxingOnlyNames: [String: UInt32] = [
        "datamatrix": UInt32(BS_ZX_DATAMATRIX), "aztec": UInt32(BS_ZX_AZTEC), "microqr": UInt32(BS_ZX_MICROQR),
        "maxicode": UInt32(BS_ZX_MAXICODE),
    ]
    private static let zxingOnlyDefault = UInt32(
        BS_ZX_DATAMATRIX | BS_ZX_AZTEC | BS_ZX_MICROQR | BS_ZX_MAXICODE | BS_ZX_PDF417)

    /// `datamatrix.enable`, `aztec.disable`, `microqr.enable=0` ...: (format bit, on), or nil for ZBar's names.
    private static func parseZXingOnly(_ config: String) -> (UInt32, Bool)? {
        let parts = config.lowercased().split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2, let bit = zxingOnlyNames[parts[0]] else { return nil }
        switch parts[1] {
        case "enable", "enable=1": return (bit, true)
        case "disable", "enable=0": return (bit, false)
        default: return nil
        }
    }
}
