/// `/metrics` in Prometheus's text format: base units, one series per instance, never a code's contents in a label.
enum PrometheusText {
    static let version = "0.5.0"

    static func render(_ service: ScanService) -> String {
        var out = ""
        func family(_ name: String, _ type: String, _ help: String) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        func line(_ name: String, _ labels: [(String, String)], _ value: String) {
            let l = labels.map { "\($0.0)=\"\(escape($0.1))\"" }.joined(separator: ",")
            out += "\(name)\(l.isEmpty ? "" : "{\(l)}") \(value)\n"
        }
        let instances = service.instances
        let totals = instances.map { ($0, $0.totals) }
        family("barscope_build_info", "gauge", "Barscope's version.")
        line("barscope_build_info", [("version", version)], "1")
        family("barscope_instance_up", "gauge", "1 while the instance is starting, playing, paused or reconnecting.")
        for i in instances { line("barscope_instance_up", [("instance", i.id)], i.ended ? "0" : "1") }
        family("barscope_frames_in_total", "counter", "Frames that reached the tee, over every run of the instance.")
        for (i, t) in totals { line("barscope_frames_in_total", [("instance", i.id)], "\(t.admitted)") }
        family("barscope_frames_total", "counter", "Frames scanned, over every run of the instance.")
        for (i, t) in totals { line("barscope_frames_total", [("instance", i.id)], "\(t.frames)") }
        family("barscope_frames_dropped_total", "counter", "Frames a live source's scanner skipped to stay current.")
        for (i, t) in totals { line("barscope_frames_dropped_total", [("instance", i.id)], "\(t.dropped)") }
        family("barscope_codes_total", "counter", "Codes seen (tracks started), by symbology.")
        for (i, t) in totals {
            for (symbology, n) in t.codes.sorted(by: { $0.key < $1.key }) {
                line("barscope_codes_total", [("instance", i.id), ("symbology", symbology)], "\(n)")
            }
        }
        family("barscope_restarts_total", "counter", "Times the instance's pipeline was started again after a fault.")
        for (i, t) in totals { line("barscope_restarts_total", [("instance", i.id)], "\(t.restarts)") }
        family(
            "barscope_read_cycles_total", "counter", "Read cycles closed, by result (good, noread, multiple, mismatch)."
        )
        for i in instances {
            let counts = i.controller.cycles.counts
            for outcome in CycleResult.Outcome.allCases {
                line(
                    "barscope_read_cycles_total", [("instance", i.id), ("result", outcome.rawValue)],
                    "\(counts[outcome] ?? 0)")
            }
        }
        if let publisher = service.publisher.load() {
            let sinks = publisher.counters
            family("barscope_broker_connected", "gauge", "1 while the broker (--publish) is connected.")
            for (sink, k) in sinks { line("barscope_broker_connected", [("sink", sink)], k.connected ? "1" : "0") }
            family("barscope_publish_queue_depth", "gauge", "Events waiting for the broker's acknowledgement.")
            for (sink, k) in sinks { line("barscope_publish_queue_depth", [("sink", sink)], "\(k.depth)") }
            family("barscope_events_published_total", "counter", "Events the broker acknowledged.")
            for (sink, k) in sinks { line("barscope_events_published_total", [("sink", sink)], "\(k.published)") }
            family("barscope_events_spooled_total", "counter", "Events written to the spool.")
            for (sink, k) in sinks { line("barscope_events_spooled_total", [("sink", sink)], "\(k.spooled)") }
            family(
                "barscope_events_dropped_total", "counter",
                "Events dropped: the spool was full, the disk, or the broker refused them.")
            for (sink, k) in sinks {
                for reason in ["spool-full", "disk", "rejected"] {
                    line(
                        "barscope_events_dropped_total", [("sink", sink), ("reason", reason)],
                        "\(k.dropped[reason] ?? 0)")
                }
            }
        }
        let progress = instances.map { ($0, $0.controller.progress) }
        family("barscope_scan_share", "gauge", "Share of the scanning pool's time the instance used (last 5 s).")
        for (i, p) in progress { line("barscope_scan_share", [("instance", i.id)], "\(p?.scanShare ?? 0)") }
        family("barscope_scan_waiting", "gauge", "The instance's frames waiting for a scanning worker.")
        for (i, p) in progress { line("barscope_scan_waiting", [("instance", i.id)], "\(p?.scanWaiting ?? 0)") }
        let pool = ScanPool.shared.status
        family("barscope_scan_pool_workers", "gauge", "Scanning threads shared by every instance.")
        line("barscope_scan_pool_workers", [], "\(ScanPool.shared.workers)")
        family("barscope_scan_pool_queue_depth", "gauge", "Frames waiting for a scanning worker, all instances.")
        line("barscope_scan_pool_queue_depth", [], "\(pool.queued)")
        family(
            "barscope_scan_pool_busy_ratio", "gauge", "Share of the scanning workers' time spent scanning (last 5 s).")
        line("barscope_scan_pool_busy_ratio", [], "\(pool.busyShare)")
        family("barscope_scan_pool_busy_seconds_total", "counter", "Worker seconds spent scanning, all instances.")
        line("barscope_scan_pool_busy_seconds_total", [], "\(pool.busySeconds)")
        family("barscope_event_latency_seconds", "histogram", "From a frame's arrival at the tee to its results.")
        for i in instances {
            let h = i.controller.latency.snapshot
            for (bound, count) in zip(LatencyHistogram.bounds, h.buckets) {
                line("barscope_event_latency_seconds_bucket", [("instance", i.id), ("le", "\(bound)")], "\(count)")
            }
            line("barscope_event_latency_seconds_bucket", [("instance", i.id), ("le", "+Inf")], "\(h.count)")
            line("barscope_event_latency_seconds_sum", [("instance", i.id)], "\(h.sum)")
            line("barscope_event_latency_seconds_count", [("instance", i.id)], "\(h.count)")
        }
        return out
    }

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
