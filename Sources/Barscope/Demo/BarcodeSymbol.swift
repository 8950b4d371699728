/// A code drawn as modules: a row of bars for 1D symbologies, a square matrix for 2D ones.
public struct BarcodeSymbol: Sendable, Hashable {
    /// ZBar's name for the symbology, so truth and detections compare directly.
    public let type: String
    public let text: String
    /// `modules[row][column]`, true = dark. A 1D code has one row, stretched to `barHeightModules` when drawn.
    public let modules: [[Bool]]
    /// Quiet zone in modules: left/right (and top/bottom for 2D).
    public let quietZone: Int
    /// Height of the bars in modules (1D only).
    public let barHeightModules: Int

    public var isTwoDimensional: Bool { modules.count > 1 }
    public var widthModules: Int { modules.first?.count ?? 0 }
    public var heightModules: Int { isTwoDimensional ? modules.count : barHeightModules }

    public init(type: String, text: String, modules: [[Bool]], quietZone: Int, barHeightModules: Int = 0) {
        self.type = type
        self.text = text
        self.modules = modules
        self.quietZone = quietZone
        self.barHeightModules = barHeightModules
    }

    /// Dark runs of each module row, as (row, start, length): one rectangle each when drawn.
    public var darkRuns: [(row: Int, start: Int, length: Int)] {
        var runs: [(Int, Int, Int)] = []
        for (r, row) in modules.enumerated() {
            var c = 0
            while c < row.count {
                if row[c] {
                    let s = c
                    while c < row.count && row[c] { c += 1 }
                    runs.append((r, s, c - s))
                } else {
                    c += 1
                }
            }
        }
        return runs
    }
}
