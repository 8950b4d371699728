import Foundation

/// How much the second passes may do on one still.
public struct SecondPassBudget: Sendable, Equatable {
    /// Pixels, summed over the images the passes make and read (a pass whose image would take the sum past this is
    /// skipped, not made). ZBar's and zxing-cpp's work, and the transforms', grow with the pixels.
    public var pixels: Int
    /// Wall-clock time after which no further pass starts: a guard against a machine far slower than any this
    /// was measured on, never the limit that decides on a working one (it stops the passes, and says so in
    /// ``SecondPassWork/stop``).
    public var guardTime: Duration

    public init(pixels: Int = SecondPassBudget.defaultPixels, guardTime: Duration = .seconds(60)) {
        self.pixels = pixels
        self.guardTime = guardTime
    }

    /// About the old wall-clock budget (2 s) where it was measured (docs/decisions.md, "Second passes"): all 23
    /// passes fit for an image up to about 0.55 megapixels. No image of the real-photo set needs more than 13
    /// megapixels.
    public static let defaultPixels = 24_000_000
}
