import Foundation

/// What the tests loosen when `scripts/test --sanitize KIND` runs them (it sets `BARSCOPE_SANITIZER`).
///
/// Why: AddressSanitizer and ThreadSanitizer run the code several times slower, so a live source drops frames that
/// a plain build scans, and they add their own memory (shadow, quarantine), so a resident-memory bound measures them.
/// Those runs look for memory and thread errors; the timing and memory figures are the plain run's to check.
public enum Sanitizer {
    /// `address`, `thread`, or nil for a plain build.
    public static let kind = ProcessInfo.processInfo.environment["BARSCOPE_SANITIZER"]
    public static var active: Bool { kind != nil }

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

    /// A lower bound on frames a live source delivers in real time: a tenth of it under a sanitizer, never zero.
    public static func atLeast(_ frames: Int) -> Int { active ? max(1, frames / 10) : frames }

    /// The least a live scanner is held to scan of the `frames` that reached it. It drops whole frames to stay
    /// current when the cores are busy (the suites run in parallel, on 2 cores in CI; with three spinning
    /// processes beside them it scanned a fifth), so: a tenth of them, any under a sanitizer. What came in is the
    /// source's to deliver, and the tests check it on its own; keeping up is the benchmark's to measure.
    public static func liveScanned(of frames: Int) -> Int { active ? 1 : max(1, frames / 10) }

    /// A wait for work in flight to settle: five times longer under a sanitizer.
    public static func settle(_ seconds: Double) -> Double { active ? seconds * 5 : seconds }
}
