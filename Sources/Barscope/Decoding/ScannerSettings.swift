import CZBar

/// Decoder settings in `zbarimg -S` syntax (`disable`, `qrcode.enable`, `i25.disable`, `ean13.enable=0`, ...),
/// validated once and applied to every ZBar scanner of a run.
public struct ScannerSettings: Hashable, Sendable {
    /// One parsed `-S` value: symbology (0 = all), config, value.
    struct Entry: Hashable, Sendable {
        var symbology: Int32
        var config: Int32
        var value: Int32
    }
    public private(set) var configs: [String] = []
    var entries: [Entry] = []

    public init() {}

    /// Parses `-S` values in order, as zbarimg applies them.
    /// - Throws: ``BarscopeError/badValue`` naming the first value ZBar does not understand.
    public init(_ configs: [String]) throws {
        for c in configs { try add(c) }
    }

    /// Adds one `-S` value (`zbar_parse_config`).
    public mutating func add(_ config: String) throws {
        var sym = ZBAR_NONE
        var cfg = ZBAR_CFG_ENABLE
        var val: Int32 = 0
        let failed = config.withCString { zbar_parse_config($0, &sym, &cfg, &val) } != 0
        if failed || config.isEmpty {
            throw BarscopeError.badValue("-S '\(config)': unknown symbology or setting (zbarimg syntax: "
                + "'disable', 'qrcode.enable', 'i25.disable', 'ean13.enable=0')")
        }
        configs.append(config)
        entries.append(Entry(symbology: Int32(sym.rawValue), config: Int32(cfg.rawValue), value: val))
    }

    /// Applies the settings to a ZBar image scanner, after the defaults.
    func apply(to scanner: OpaquePointer) {
        for e in entries {
            zbar_image_scanner_set_config(
                scanner, zbar_symbol_type_t(UInt32(e.symbology)), zbar_config_t(UInt32(e.config)), e.value)
        }
    }
}
