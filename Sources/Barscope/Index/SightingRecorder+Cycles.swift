import Foundation

/// Read cycles' results go to the index beside the sightings: written by the same thread in the same batches,
/// waiting and spooled as they are.
extension SightingRecorder {
    /// A closed cycle (under the lock): its times as the run's sightings' (a file's made absolute at the end).
    func takeCycle(_ c: CycleResult, snapshot: String?) {
        let opened = cycleTime(c.startPtsNs)
        let closed = cycleTime(c.endPtsNs)
        var row = CycleRow(
            run: run, cycle: c.cycle, label: c.label, result: c.outcome.rawValue,
            codes: c.codes.map { ("\($0.type):\($0.data)", $0.expected) }, camera: context.camera,
            pipeline: context.pipeline, node: context.node, opened: opened.wall, closed: closed.wall,
            snapshot: snapshot.map(Self.absolute))
        (row.recording, row.offsetSeconds) = place(opened.offset)
        if context.live {
            pendingCycles[row.key] = row
            lock.broadcast()
        } else {
            heldCycles[row.key] = row
        }
    }

    /// The time of a stream time without a frame of its own: the frame it would be at the run's rate (so that the
    /// measured rate is not changed by it).
    private func cycleTime(_ pts: UInt64?) -> (wall: Date, offset: Double?) {
        guard let o = origin else { return time(0, pts) }
        let p = Double(pts ?? lastPts)
        return time(o.frame + Int(((p - o.pts) / frameNs).rounded()), pts)
    }
}

extension CycleRow {
    var key: String { "\(run)#\(cycle)" }

    /// A row from its JSON (``json``), as the spool keeps it; nil when it is not a cycle's.
    init?(json o: [String: Any]) {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let run = o["run"] as? String, let cycle = o["cycle"] as? Int, let result = o["result"] as? String,
            let opened = (o["opened"] as? String).flatMap(f.date), let closed = (o["closed"] as? String).flatMap(f.date)
        else { return nil }
        let codes = (o["codes"] as? [[String: Any]] ?? []).compactMap { c -> (code: String, expected: Bool)? in
            (c["code"] as? String).map { ($0, c["expected"] as? Bool ?? false) }
        }
        self.init(
            run: run, cycle: cycle, label: o["label"] as? String, result: result, codes: codes,
            camera: o["camera"] as? String ?? "", pipeline: o["pipeline"] as? String ?? "",
            node: o["node"] as? String ?? "", opened: opened, closed: closed, snapshot: o["snapshot"] as? String,
            recording: o["recording"] as? String, offsetSeconds: o["offset_s"] as? Double)
    }
}
