import Foundation
import Testing

/// Looks at `condition` every `every` seconds until it holds or `seconds` have passed, and says whether it held.
/// The one place the tests sleep to wait (every other sleep in `Tests` paces a source and says so). It records no
/// issue: for a wait whose timeout is itself an answer the caller acts on (a child given its grace before it is
/// killed, a server that is not up yet and is then reported); `waitUntil` is the wait that fails the test.
@discardableResult
public func pollUntil(
    _ seconds: Double, every: Double = 0.05, _ condition: () throws -> Bool
) rethrows -> Bool {
    let deadline = Date(timeIntervalSinceNow: seconds)
    while true {
        if try condition() { return true }
        if Date() >= deadline { break }
        Thread.sleep(forTimeInterval: every)
    }
    // Once more after the deadline: what came while the last look slept counts.
    return try condition()
}

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
    if try pollUntil(seconds, condition) { return true }
    let instead = seen()
    Issue.record(
        "waited \(seconds) s for \(what)\(instead.isEmpty ? "" : "; seen: \(instead)")", sourceLocation: sourceLocation)
    return false
}
