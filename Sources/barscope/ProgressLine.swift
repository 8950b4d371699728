import Barscope
import Foundation

/// The run's progress on standard error while it runs: on a terminal, one line redrawn in place (a bar when the
/// stream has a duration: position / duration, frames per second, codes found); otherwise a plain line every
/// few seconds, for logs. Standard output stays for events.
final class ProgressLine: @unchecked Sendable {
    // Sendable: `running` and the line's width are touched under `lock`; the source is behind its own lock.
    private let source = Locked<(@Sendable () -> ScanProgress?)?>(nil)
    private let terminal: Bool
    private let interval: Double
    private let lock = NSLock()
    private var running = true
    private var drawn = false
    private let finished = DispatchSemaphore(value: 0)

    init(terminal: Bool = isatty(STDERR_FILENO) == 1) {
        self.terminal = terminal
        interval = terminal ? 0.25 : 5
        let thread = Thread { [self] in loop() }
        thread.name = "barscope-progress"
        thread.start()
    }

    /// Where the progress comes from (the controller, held weakly by the caller's closure: the controller's
    /// observer holds this line).
    func follow(_ progress: @escaping @Sendable () -> ScanProgress?) { source.withLock { $0 = progress } }

    /// Stops drawing and clears the line, before the summary is printed.
    func end() {
        lock.lock()
        running = false
        lock.unlock()
        finished.wait()
        lock.lock()
        if drawn && terminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        lock.unlock()
    }

    /// A line for the reader (a warning), above the progress line, which is redrawn after it.
    func note(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        FileHandle.standardError.write(Data(((drawn && terminal ? "\r\u{1B}[K" : "") + text + "\n").utf8))
    }

    private func loop() {
        defer { finished.signal() }
        var next = Date(timeIntervalSinceNow: interval)
        while true {
            Thread.sleep(forTimeInterval: 0.05)
            lock.lock()
            let go = running
            lock.unlock()
            guard go else { return }
            guard Date() >= next else { continue }
            next = Date(timeIntervalSinceNow: interval)
            guard let p = source.load()?(), p.frames > 0 else { continue }
            let text = Self.describe(p, barWidth: terminal ? 24 : 0)
            lock.lock()
            if running {
                FileHandle.standardError.write(Data((terminal ? "\r\u{1B}[K" + text : text + "\n").utf8))
                drawn = true
            }
            lock.unlock()
        }
    }

    /// `[#########---------------]  0:12.3 / 0:30.0  41 %  245 frames/s  3 codes` (no bar without a duration).
    static func describe(_ p: ScanProgress, barWidth: Int) -> String {
        func clock(_ ns: UInt64) -> String {
            let s = Double(ns) / 1e9
            return String(format: "%d:%04.1f", Int(s) / 60, s.truncatingRemainder(dividingBy: 60))
        }
        var parts: [String] = []
        if let position = p.positionNs, let duration = p.durationNs, duration > 0 {
            let fraction = min(1, Double(position) / Double(duration))
            if barWidth > 0 {
                let filled = Int((fraction * Double(barWidth)).rounded())
                parts.append(
                    "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled) + "]"
                )
            }
            parts.append("\(clock(position)) / \(clock(duration))")
            parts.append(String(format: "%.0f %%", fraction * 100))
        } else if let position = p.positionNs {
            parts.append(clock(position))
        }
        parts.append("\(p.frames) frames")
        parts.append(String(format: "%.0f frames/s", p.framesPerSecond))
        parts.append("\(p.codes) code\(p.codes == 1 ? "" : "s")")
        if let rate = p.cycles.readRate {
            let total = p.cycles.values.reduce(0, +)
            parts.append("\(total) cycle\(total == 1 ? "" : "s") \(String(format: "%.0f", rate * 100)) % read")
        }
        return "barscope: " + parts.joined(separator: "  ")
    }
}
