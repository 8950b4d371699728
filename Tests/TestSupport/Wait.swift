import Foundation
import Testing

/// Waits for `condition`, looking every 50 ms, for at most `seconds`; says whether it came. At the deadline the
/// calling test records an issue naming what it waited for and what it saw instead (`seen`), so a wait cannot fail
/// silently; the caller decides whether to go on (`#require` on the result stops the test).
/// - Parameters:
///   - what: what is awaited ("the run's paused state in events.jsonl").
///   - seen: what there is when the deadline passes (the last lines, a count).
@discardableResult
public func waitUntil(
    _ seconds: Double, _ what: String, seen: () -> String = { "" },
    sourceLocation: SourceLocation = #_sourceLocation, _ condition: () throws -> Bool
) rethrows -> Bool {
    let deadline = Date(timeIntervalSinceNow: seconds)
    while true {
        if try condition() { return true }
        if Date() >= deadline { break }
        Thread.sleep(forTimeInterval: 0.05)
    }
    // Once more after the deadline: what came while the last look slept counts.
    if try condition() { return true }
    let instead = seen()
    Issue.record(
        "waited \(seconds) s for \(what)\(instead.isEmpty ? "" : "; seen: \(instead)")", sourceLocation: sourceLocation)
    return false
}
