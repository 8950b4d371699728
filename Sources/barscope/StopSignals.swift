import Barscope
import CBarscope
import Foundation

/// SIGINT, SIGTERM and SIGHUP belong to the command line, not to the library: the handler (C, async-signal-safe)
/// only counts them, and a thread here turns each into a request to the controller: the first finishes the
/// recording (end of stream first), the next stops at once. A stop asked for otherwise (a `stop` command) counts as
/// the first, so the next signal stops at once.
enum StopSignals {
    static func install() { bs_install_signal_handlers() }
    /// The last signal received, 0 if none.
    static var last: Int32 { bs_last_signal() }

    /// Watches for signals on a thread of its own: `first` for the first stop request, `next` for each after it.
    static func watch(first: @escaping @Sendable () -> Void, next: @escaping @Sendable () -> Void) {
        let thread = Thread {
            var handled: Int32 = 0  // a signal that came before this thread started counts too
            while true {
                // Asleep until the handler's byte comes through its pipe.
                let n = bs_wait_stop_requests(handled)
                handled == 0 ? first() : next()
                handled = n
            }
        }
        thread.name = "barscope-signals"
        thread.start()
    }

    /// Signals while `controller` runs: the first finishes (end of stream first), the next stops at once; a stop
    /// asked for otherwise (a `stop` command) counts as the first. `onStopNow` runs when the stop becomes immediate
    /// (to give up on a reader that does not read, say).
    static func watch(_ controller: ScanController, onStopNow: @escaping @Sendable () -> Void) {
        let request: @Sendable () -> Void = {
            if controller.isStopping {
                onStopNow()
                controller.stopNow()
            } else {
                controller.requestStop()
            }
        }
        watch(first: request, next: request)
    }
}
