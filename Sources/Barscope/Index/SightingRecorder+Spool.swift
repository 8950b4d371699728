import Foundation

/// The spool: rows a recorder could not write before it closed wait in files of the state folder, and the next
/// recorder for the same index takes them.
extension SightingRecorder {
    /// Takes the rows earlier recorders left in the spool (each file renamed to this recorder's name first: of
    /// several recorders starting at once, one takes a file), to write them with its own.
    func claimSpool() {
        guard let folder = context.spool else { return }
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        for name in files.sorted() where name.hasPrefix("sightings-") && name.hasSuffix(".jsonl") {
            let from = (folder as NSString).appendingPathComponent(name)
            let to = (folder as NSString).appendingPathComponent("claimed-\(run)-\(name)")
            guard rename(from, to) == 0, let text = try? String(contentsOfFile: to, encoding: .utf8) else { continue }
            claimed.append(to)
            for line in text.split(separator: "\n") {
                guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                    continue
                }
                if let row = Sighting(json: o) { pending[row.key] = row }
                if let cycle = CycleRow(json: o) { pendingCycles[cycle.key] = cycle }
            }
        }
        if !pending.isEmpty || !pendingCycles.isEmpty { lock.broadcast() }
    }
}
