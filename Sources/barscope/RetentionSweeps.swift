import Barscope
import Foundation

/// `--keep-days N` on `index` and `serve`: the value, and what a sweep says on standard error.
enum RetentionSweeps {
    static func days(_ text: String) throws -> Double {
        guard let d = Double(text), d > 0, d <= 36_500 else {
            throw UsageError("--keep-days '\(text)': expected a number of days between 0 and 36500 (0.5, 30)")
        }
        return d
    }

    /// `barscope: retention (30 days): 12 sightings and 3 files deleted; 1 file kept: being written`
    static func describe(_ r: Retention.Result, days: Double) -> String {
        let n = days == days.rounded() ? String(Int(days)) : String(days)
        var line = "barscope: retention (\(n) days): \(r.rows) sightings and \(r.deleted.count) files deleted"
        if !r.beingWritten.isEmpty { line += "; \(r.beingWritten.count) old files kept: being written" }
        return line
    }

    /// The service's sweeps: at its start, then every hour, on a thread of their own; each over the index and the
    /// instances' snapshots and recordings.
    static func serve(_ service: ScanService, days: Double, every interval: Double = 3600) {
        let thread = Thread {
            while true {
                sweepOnce(service, days: days)
                Thread.sleep(forTimeInterval: interval)
            }
        }
        thread.name = "barscope-retention"
        thread.start()
    }

    static func sweepOnce(_ service: ScanService, days: Double) {
        guard let location = service.index.load()?.location else { return }
        var also: [String] = []
        for instance in service.instances {
            if let folder = instance.snapshotFolder { also += Retention.files(in: folder, suffix: ".png") }
            if let r = instance.recording {
                // The recording, its segments (`dock-%05d.mp4`) and its sessions: the files of its folder named
                // after its stem, with its extension.
                let name = (r as NSString).lastPathComponent
                let stem = name.components(separatedBy: "-%").first.map { ($0 as NSString).deletingPathExtension }
                let folder = (r as NSString).deletingLastPathComponent
                also += Retention.files(
                    in: folder.isEmpty ? "." : folder, prefix: stem ?? name,
                    suffix: "." + (name as NSString).pathExtension)
            }
        }
        do {
            let ledger = try SightingIndexes.openLedger(location)
            defer { ledger.close() }
            let r = try Retention.sweep(ledger, keepDays: days, also: also)
            FileHandle.standardError.write(Data((describe(r, days: days) + "\n").utf8))
        } catch {
            FileHandle.standardError.write(Data("barscope: retention: \(error) (tried again in an hour)\n".utf8))
        }
    }
}
