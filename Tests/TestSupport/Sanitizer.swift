import Foundation
import Testing

/// What the tests check differently when `scripts/test --sanitize KIND` runs them (it sets `BARSCOPE_SANITIZER`),
/// and the notice each such test gives.
///
/// Why: AddressSanitizer and ThreadSanitizer run the code several times slower, so a live source drops frames that
/// a plain build scans, and they add their own memory (shadow, quarantine), so a resident-memory bound measures them.
/// Those runs look for memory and thread errors; the timing and memory figures are the plain run's to check.
///
/// Nothing is loosened silently: a check a sanitizer's build cannot make is skipped with a warning that names it and
/// says why (`plainOnly`), and a lowered bound is a stated one, its plain and sanitized figures named in a warning
/// (`bound`, `atLeast`, `liveScanned`). A plain build makes every check at its full bound and records nothing.
public enum Sanitizer {
    /// `address`, `thread`, or nil for a plain build.
    public static let kind = ProcessInfo.processInfo.environment["BARSCOPE_SANITIZER"]
    public static var active: Bool { kind != nil }

    /// How many times fewer frames a live source is held to deliver (and its recording to keep) under a sanitizer:
    /// the instrumented build runs the live demo and its encoder several times slower than real time (ThreadSanitizer
    /// made 22.9 of the console's 50 events/s), and frames the source cannot make in time are never made.
    public static let liveSlowdown = 10

    /// The environment for a program not built with the sanitizer that loads our instrumented plugin
    /// (gst-launch-1.0): the sanitizer's runtime preloaded, its own leaks not reported.
    public static func environment(_ base: [String: String]) -> [String: String] {
        guard active, let runtime = ProcessInfo.processInfo.environment["BARSCOPE_SANITIZER_RUNTIME"],
            !runtime.isEmpty
        else { return base }
        var env = base
        env["LD_PRELOAD"] = runtime
        env["ASAN_OPTIONS"] = "detect_leaks=0"
        return env
    }

    /// A whole environment given to one of our programs (one the test builds from nothing, as systemd would), with
    /// the sanitizer's options kept: without its suppressions, LeakSanitizer reports GLib's allocations for the
    /// process's life and fails the program's exit.
    public static func keepingOptions(_ environment: [String: String]) -> [String: String] {
        guard active else { return environment }
        var env = environment
        for key in ["ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS", "BARSCOPE_SANITIZER"] {
            if let v = ProcessInfo.processInfo.environment[key] { env[key] = v }
        }
        return env
    }

    /// Makes `check` in a plain build. Under a sanitizer it is not made, and the calling test records a warning
    /// naming it and the reason: a skipped check is seen in the run's output, never a silent pass.
    /// - Parameters:
    ///   - check: what is checked ("peak resident memory below 150 MB").
    ///   - reason: why a sanitizer's build cannot check it; by default, that its own memory would be measured.
    public static func plainOnly(
        _ check: String, because reason: String = "the sanitizer's shadow memory and quarantine are in the figure",
        sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
    ) rethrows {
        guard let kind else { return try body() }
        Issue.record(
            "skipped under the \(kind) sanitizer: \(check) (\(reason))", severity: .warning,
            sourceLocation: sourceLocation)
    }

    /// A bound: `plain` in a plain build; under a sanitizer `sanitized`, and the calling test records a warning
    /// naming what is bounded and both figures. Call it once, outside a polled condition.
    public static func bound<T: CustomStringConvertible>(
        _ plain: T, sanitized: T, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) -> T {
        guard let kind else { return plain }
        Issue.record(
            "under the \(kind) sanitizer, \(what): \(sanitized) instead of \(plain)", severity: .warning,
            sourceLocation: sourceLocation)
        return sanitized
    }

    /// A lower bound on frames a live source delivers in real time: `frames`; under a sanitizer a `liveSlowdown`th
    /// of it (never zero), said in a warning.
    public static func atLeast(
        _ frames: Int, _ what: String = "frames a live source must deliver",
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Int {
        bound(frames, sanitized: max(1, frames / liveSlowdown), what, sourceLocation: sourceLocation)
    }

    /// The least a live scanner is held to scan of the `frames` that reached it. It drops whole frames to stay
    /// current when the cores are busy (the suites run in parallel, on 2 cores in CI; with three spinning
    /// processes beside them it scanned a fifth), so: a tenth of them; one under a sanitizer, said in a warning. What
    /// came in is the source's to deliver, and the tests check it on its own; keeping up is the benchmark's to
    /// measure.
    public static func liveScanned(of frames: Int, sourceLocation: SourceLocation = #_sourceLocation) -> Int {
        bound(
            max(1, frames / 10), sanitized: 1, "frames a live scanner must scan of the \(frames) that reached it",
            sourceLocation: sourceLocation)
    }
}
