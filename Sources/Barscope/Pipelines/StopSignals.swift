import CBarscope

/// SIGINT, SIGTERM and SIGHUP as stop requests: the handler (C, async-signal-safe) only counts them; the runner's
/// bus loop polls the count, sends EOS on the first and stops at once on the second.
public enum StopSignals {
    public static func install() { bs_install_signal_handlers() }
    /// The last signal received, 0 if none.
    public static var last: Int32 { bs_last_signal() }
}
