import Foundation

/// A value behind a lock: `withLock` runs its body with the value, one thread at a time.
///
/// Why not `Synchronization.Mutex`: on Linux, ThreadSanitizer cannot see the toolchain's Mutex (its futex lock lives
/// in uninstrumented library code), so every value behind one is reported as a race (a two-thread dictionary
/// under a Mutex, correct as written, gives "Swift access race"; the same under this lock gives none), and a TSan run
/// could find no real race among them. NSLock is a pthread mutex, which ThreadSanitizer intercepts.
/// Sendable: the value is only reached through `withLock`, under the lock.
public final class Locked<Value>: @unchecked Sendable {
    private let lock: CountedLock
    private var value: Value

    /// The first value is stored under the lock too: a Locked made on one thread and handed to another through
    /// GLib or GStreamer (whose locks and atomics ThreadSanitizer does not see) is then ordered by this lock alone
    /// (seen: a latency histogram made on the HTTP thread and first added to by a pool worker, reported as a race).
    public init(_ value: Value) {
        let lock = CountedLock()
        lock.lock()
        self.lock = lock
        self.value = value
        lock.unlock()
    }

    /// Runs `body` with the value, holding the lock; never call back into the same lock from `body`.
    @inline(__always)
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// A copy of the value. Read a stored closure with this, never with `withLock { $0 }`: the inout round trip
    /// through the generic stores the closure back wrapped in two more reabstraction thunks, on every call, so that
    /// calling it grows slower without bound (seen: 70 % of a service's CPU after a few minutes of events).
    public func load() -> Value {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}

// Collections read out of a `Locked` that its holder keeps writing in place (counters, samples): a plain copy shares
// the stored buffer, and once the reader lets go the writer's next in-place write is ordered after the read only by
// the Swift runtime's reference count, which ThreadSanitizer does not see (reported twice: RunMetrics' samples on
// fd6cdbc, ServiceInstance's counts on da59be8). Copy them with `unshared` inside `withLock` instead.
extension Array {
    /// The same elements in storage of their own.
    var unshared: [Element] { map { $0 } }
}

extension Dictionary {
    /// The same entries in storage of their own.
    var unshared: [Key: Value] { Dictionary(uniqueKeysWithValues: map { ($0.key, $0.value) }) }
}
