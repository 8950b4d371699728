/// What the stages of one run share, made once by `ScanRun` before the graph plays: the configuration it started
/// with, the controller's live settings, the frame ledger between the branches, the counters, and where events go
/// (queued, never delivered nor waited for, under the caller's locks).
struct RunParts: Sendable {
    let configuration: RunConfiguration
    let settings: LiveSettings
    let ledger: FrameLedger
    let metrics: RunMetrics
    /// The controller's read cycles (outlive the run).
    let cycles: CycleDesk
    let emit: @Sendable (Event) -> Void
    /// Waits while the event stream's reader is far behind (files; returns at once for a live source).
    let waitForRoom: @Sendable () -> Void
}
