import Foundation
import Synchronization

/// Debug builds count every acquisition of the project's own locks (`Locked`, and the conditions made as
/// `CountedCondition`), process-wide, so that a test can hold a frame's path to its budget of locks
/// (`barscope run` says the count when `BARSCOPE_COUNT_LOCKS` is set). Release builds count nothing.
public enum LockCount {
    #if DEBUG
        private static let total = Atomic<Int>(0)
    #endif

    @inline(__always) static func note() {
        #if DEBUG
            total.add(1, ordering: .relaxed)
        #endif
    }

    /// Acquisitions so far; nil in a release build.
    public static var acquisitions: Int? {
        #if DEBUG
            return total.load(ordering: .relaxed)
        #else
            return nil
        #endif
    }
}

/// A lock whose acquisitions `LockCount` counts (an `NSLock`, a pthread mutex, inside).
final class CountedLock: NSLocking, @unchecked Sendable {
    // Sendable: NSLock is thread-safe; the count is atomic.
    private let mutex = NSLock()
    @inline(__always) func lock() {
        LockCount.note()
        mutex.lock()
    }
    @inline(__always) func unlock() { mutex.unlock() }
}

/// A condition whose acquisitions `LockCount` counts (a wait's own re-acquisition is not a new one).
final class CountedCondition: NSLocking, @unchecked Sendable {
    // Sendable: NSCondition is thread-safe; the count is atomic.
    private let condition = NSCondition()
    @inline(__always) func lock() {
        LockCount.note()
        condition.lock()
    }
    @inline(__always) func unlock() { condition.unlock() }
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
    func wait() { condition.wait() }
    func wait(until limit: Date) -> Bool { condition.wait(until: limit) }
    func signal() { condition.signal() }
    func broadcast() { condition.broadcast() }
}
