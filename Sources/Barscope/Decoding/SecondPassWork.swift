import Foundation

/// What the second passes did on one image.
public struct SecondPassWork: Sendable, Equatable {
    public enum Stop: String, Sendable {
        /// A pass read a code.
        case found
        /// Nothing found, and some passes were skipped: they would have taken the pixels past the budget.
        case budget
        /// The guard's wall-clock time ran out (a machine far too slow, or stopped): not the same on every run.
        case guardTime = "guard-time"
        /// Every pass was tried, none skipped, nothing found.
        case exhausted
    }
    /// Passes made and read.
    public var passes = 0
    /// Pixels of the images those passes read.
    public var pixels = 0
    /// Passes skipped, their images too large for what was left of the budget.
    public var skipped = 0
    public var stop = Stop.exhausted
}
