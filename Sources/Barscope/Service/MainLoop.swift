import CBarscope
import CSoup
import Foundation

/// The GLib main loop of the process (the default main context), where libsoup's server runs. Its handlers run on
/// the loop's thread and must never block; work from other threads reaches it through `MainLoop.run`.
public enum MainLoop {
    /// The closure's box, released by GLib's destroy-notify after the call.
    private final class Call {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    nonisolated(unsafe) private static var loop: OpaquePointer? = nil

    /// Turns the default main context on the calling thread until `quit()`.
    public static func runUntilQuit() {
        let l = g_main_loop_new(nil, 0)
        loop = l
        g_main_loop_run(l)
        g_main_loop_unref(l)
    }

    /// Ends `runUntilQuit()` (from any thread).
    public static func quit() {
        run { if let loop { g_main_loop_quit(loop) } }
    }

    /// Runs `body` on the main loop's thread, soon (from any thread; in order with other calls).
    public static func run(_ body: @escaping @Sendable () -> Void) {
        let call = Unmanaged.passRetained(Call(body)).toOpaque()
        // The main context's lock orders this thread's work before the call; ThreadSanitizer is told so
        // (bs_handoff_*, CBarscope.h).
        bs_handoff_publish(call)
        // Always queued to the default context (never run at once on the caller's thread, as g_main_context_invoke
        // does when no thread owns the context yet): whatever the loop's state, the body runs on its thread.
        g_idle_add_full(
            G_PRIORITY_DEFAULT,
            { data in
                bs_handoff_receive(data)
                defer { bs_handoff_publish(data) }
                Unmanaged<Call>.fromOpaque(data!).takeUnretainedValue().body()
                return 0  // G_SOURCE_REMOVE
            }, call,
            { data in
                bs_handoff_receive(data)
                Unmanaged<Call>.fromOpaque(data!).release()
            })
    }

    /// Calls `body` every `milliseconds` on the main loop's thread while it returns true.
    public static func every(milliseconds: UInt32, _ body: @escaping () -> Bool) {
        let call = Unmanaged.passRetained(Repeat(body)).toOpaque()
        g_timeout_add_full(
            G_PRIORITY_DEFAULT, milliseconds,
            { data in Unmanaged<Repeat>.fromOpaque(data!).takeUnretainedValue().body() ? 1 : 0 }, call,
            { data in Unmanaged<Repeat>.fromOpaque(data!).release() })
    }
    private final class Repeat {
        let body: () -> Bool
        init(_ body: @escaping () -> Bool) { self.body = body }
    }
}
