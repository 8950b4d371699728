import CZBar

/// One ZBar image scanner. ZBar scanners are not thread-safe: each worker owns its own.
public final class ZBarScanner {
    private var scanner: OpaquePointer
    private var density = (rows: 1, columns: 1)
    /// Which symbologies scans look for now (`setKinds`).
    private(set) var kinds = Kinds.all
    /// What the settings enable, symbology by symbology (ZBar's defaults counted), for `setKinds` to restore.
    private var enabled: [(symbology: zbar_symbol_type_t, on: Int32)] = []
    let settings: ScannerSettings
    /// The settings ask for payloads' bytes as they are (`-Sbinary`): a QR code's text is then not guessed.
    let keepsBytes: Bool

    /// - Parameter settings: `-S` values applied after ZBar's defaults.
    public init(settings: ScannerSettings = ScannerSettings()) {
        self.settings = settings
        keepsBytes = settings.binary
        scanner = Self.make(settings)
        enabled = Self.allSymbologies.map { sym in
            var v: Int32 = 0
            return (sym, zbar_image_scanner_get_config(scanner, sym, ZBAR_CFG_ENABLE, &v) == 0 ? v : 0)
        }
    }

    /// Which of the enabled symbologies a scan looks for.
    public enum Kinds: Sendable {
        case all
        /// 1D codes only (QR and SQ off): no QR stage, which binarizes the whole image once it finds finder lines.
        case linear
        /// 2D codes only.
        case matrix
    }

    /// The symbologies this ZBar decodes (PDF417 is left out: it is built without it, and asking about it
    /// crashes; a composite is not a decoder of its own).
    static let allSymbologies: [zbar_symbol_type_t] = [
        ZBAR_EAN2, ZBAR_EAN5, ZBAR_EAN8, ZBAR_UPCE, ZBAR_ISBN10, ZBAR_UPCA, ZBAR_EAN13, ZBAR_ISBN13, ZBAR_I25,
        ZBAR_DATABAR, ZBAR_DATABAR_EXP, ZBAR_CODABAR, ZBAR_CODE39, ZBAR_QRCODE, ZBAR_SQCODE, ZBAR_CODE93,
        ZBAR_CODE128,
    ]

    /// Restricts the scans that follow to 1D or 2D codes among those the settings enable (`.all`: as set).
    public func setKinds(_ k: Kinds) {
        guard k != kinds else { return }
        kinds = k
        applyKinds()
    }

    private func applyKinds() {
        for (sym, on) in enabled {
            let matrix = Self.isTwoDimensional(sym)
            let keep = kinds == .all || (kinds == .matrix) == matrix
            zbar_image_scanner_set_config(scanner, sym, ZBAR_CFG_ENABLE, keep ? on : 0)
        }
    }

    private static func make(_ settings: ScannerSettings) -> OpaquePointer {
        let scanner = zbar_image_scanner_create()!
        // Every frame is judged on its own; the tracker, not ZBar's cache, links frames.
        zbar_image_scanner_enable_cache(scanner, 0)
        settings.apply(to: scanner)
        // A QR code's bytes come raw and `QRByteText` reads them: ZBar's own guess of their character set misreads
        // Shift-JIS and UTF-8 as Big5.
        zbar_image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_BINARY, 1)
        return scanner
    }

    /// A fresh ZBar scanner with the same settings, kinds and densities, for each image. ZBar's decoder keeps what
    /// it half-read from one scan to the next (`zbar_scan_image` resets its QR finder lines only; an EAN's half
    /// waits for the other, the QR reader's random state runs on): an EAN cut short in one image was completed by
    /// a half read in the image before, which in video is another frame, or any frame the worker took before, so a
    /// file scanned twice gave different reads. A scanner costs a few microseconds to make; it also keeps a long
    /// run's memory flat (each decode left about 90 bytes behind).
    private func renew() {
        zbar_image_scanner_destroy(scanner)
        scanner = Self.make(settings)
        applyDensity()
        if kinds != .all { applyKinds() }
    }

    /// Within `body`, every scan is of one image (its second passes, its regions looked at again): ZBar joins what
    /// they half-read, as it joins its own scan lines; the scanner is fresh when `body` starts. Outside, each scan
    /// is an image of its own.
    func readingOneImage<R>(_ body: () -> R) -> R {
        guard !oneImage else { return body() }
        renew()
        oneImage = true
        defer { oneImage = false }
        return body()
    }
    private var oneImage = false

    deinit { zbar_image_scanner_destroy(scanner) }

    /// Scans every n-th row and column (ZBar's y and x density, for every symbology). 2 halves the cost of a
    /// search over the whole frame; codes only a few lines high may then be missed.
    public func setDensity(_ n: Int) { setDensity(rows: n, columns: n) }

    /// Row and column densities apart; 0 turns that direction off (a horizontal 1D code is read along rows only).
    public func setDensity(rows: Int, columns: Int) {
        guard rows != density.rows || columns != density.columns else { return }
        density = (rows, columns)
        applyDensity()
    }

    /// Runs `body` with the scans restricted to `kinds` at these densities, then sets back what was set.
    func scanning<T>(_ kinds: Kinds, rows: Int, columns: Int, _ body: () -> T) -> T {
        let before = (kinds: self.kinds, density: density)
        setKinds(kinds)
        setDensity(rows: rows, columns: columns)
        defer {
            setKinds(before.kinds)
            setDensity(rows: before.density.rows, columns: before.density.columns)
        }
        return body()
    }

    private func applyDensity() {
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_Y_DENSITY, Int32(max(0, density.rows)))
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_X_DENSITY, Int32(max(0, density.columns)))
    }

    /// Scans a luma plane in place (zero-copy: ZBar gets the stride as the width and a crop to the real width).
    /// - Parameters:
    ///   - image: the plane, lent for the duration of the call.
    ///   - mapping: adds the crop offset so that every point comes back in full-frame pixels.
    ///   - viewfinder: the region, if any, to judge `inViewfinder`.
    /// - Returns: the codes found; an unreadable frame is simply an empty list.
    public func scan(_ image: LumaImage, mapping: CropMapping = CropMapping(), viewfinder: PixelRect? = nil)
        -> [Detection]
    {
        let reads = scanned(image) { zimage in detections(of: zimage, image, mapping, viewfinder) } ?? []
        return Self.withoutParts(Self.withoutJoinedHalves(reads))
    }

    /// Lends ZBar's image of `image`, scanned, to `body` (its symbols), or nil when nothing was found. The image
    /// is handed back to the scanner afterwards, as the stock element does: without that the symbols of every
    /// decode stayed allocated (about 5 KB/s on the live demo).
    func scanned<R>(_ image: LumaImage, _ body: (OpaquePointer) -> R) -> R? {
        if !oneImage { renew() }
        guard let zimage = zbar_image_create() else { return nil }
        defer {
            zbar_image_scanner_recycle_image(scanner, zimage)
            zbar_image_destroy(zimage)
        }
        zbar_image_set_format(zimage, y800)
        zbar_image_set_size(zimage, UInt32(image.stride), UInt32(image.height))
        zbar_image_set_crop(zimage, 0, 0, UInt32(image.width), UInt32(image.height))
        zbar_image_set_data(zimage, image.base, UInt(image.stride * image.height), nil)
        guard zbar_scan_image(scanner, zimage) > 0 else { return nil }
        return body(zimage)
    }
}

/// ZBar's name for 8-bit grey, 'Y800' as a little-endian fourcc (computed once, not per frame).
let y800: UInt = 0x3030_3859
