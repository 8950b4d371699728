import CGStreamer
import Foundation

/// A fixed set of scanning threads, one ZBar scanner each (ZBar scanners are not thread-safe), fed from
/// appsink's streaming thread through a bounded hand-off: `submit` blocks while every worker is busy, so a file
/// is never read ahead of the scanners and memory stays flat.
///
/// Sendable: the job list and counters are guarded by `condition`; each scanner lives on its own thread.
public final class ScanWorkerPool: @unchecked Sendable {
    /// One frame to scan. Owns one reference to the sample (released after the scan).
    public struct Job: @unchecked Sendable {  // Sendable: the sample is handed over, used by one worker, released
        public let sequence: Int
        public let frame: Int
        public let ptsNs: UInt64?
        public let sample: OpaquePointer
        public init(sequence: Int, frame: Int, ptsNs: UInt64?, sample: OpaquePointer) {
            self.sequence = sequence
            self.frame = frame
            self.ptsNs = ptsNs
            self.sample = sample
        }
    }

    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var busy = 0
    private var stopping = false
    private var running = 0
    public let workers: Int

    /// - Parameters:
    ///   - workers: scanning threads (the cores, by default).
    ///   - live: when given, its decoder settings win over `settings` and `engine`, and a change to them (while
    ///     playing) makes each worker build a new reader before its next frame.
    ///   - process: runs on a worker thread with that worker's scanner; must not keep the sample.
    public init(
        workers: Int, settings: ScannerSettings, engine: Engine = .zbar, live: LiveSettings? = nil,
        process: @escaping @Sendable (BarcodeReader, Job) -> Void
    ) {
        self.workers = max(1, workers)
        for i in 0..<self.workers {
            let thread = Thread { [self] in
                var generation = live?.decoderGeneration ?? 0
                var scanner =
                    live.map { BarcodeReader(engine: $0.values.engine, settings: $0.values.scanner) }
                    ?? BarcodeReader(engine: engine, settings: settings)
                while let job = self.next() {
                    if let live, live.decoderGeneration != generation {
                        let v = live.values
                        generation = v.decoderGeneration
                        scanner = BarcodeReader(engine: v.engine, settings: v.scanner)
                    }
                    process(scanner, job)
                    gst_sample_unref(job.sample)
                    self.finished()
                }
                self.exited()
            }
            thread.name = "barscope-scan-\(i)"
            condition.lock()
            running += 1
            condition.unlock()
            thread.start()
        }
    }

    /// Hands a frame to the next free worker; blocks while all are busy. Takes over the sample's reference.
    public func submit(_ job: Job) {
        condition.lock()
        while jobs.count + busy >= workers && !stopping { condition.wait() }
        if stopping {
            condition.unlock()
            gst_sample_unref(job.sample)
            return
        }
        jobs.append(job)
        condition.broadcast()
        condition.unlock()
    }

    /// Returns when every submitted frame has been scanned.
    public func waitIdle() {
        condition.lock()
        while !jobs.isEmpty || busy > 0 { condition.wait() }
        condition.unlock()
    }

    /// Finishes the jobs already queued, then ends the threads and waits for them.
    public func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while running > 0 { condition.wait() }
        condition.unlock()
    }

    private func next() -> Job? {
        condition.lock()
        defer { condition.unlock() }
        while jobs.isEmpty && !stopping { condition.wait() }
        guard !jobs.isEmpty else { return nil }
        busy += 1
        return jobs.removeFirst()
    }

    private func finished() {
        condition.lock()
        busy -= 1
        condition.broadcast()
        condition.unlock()
    }

    private func exited() {
        condition.lock()
        running -= 1
        condition.broadcast()
        condition.unlock()
    }
}
