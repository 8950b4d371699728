import Foundation
import Glibc

/// One sink's events on disk from the moment they are given until the broker acknowledges them (MQTT's PUBACK,
/// Kafka's delivery report), so that a broker that is away, or a barscope killed with -9, loses nothing.
///
/// Append-only segment files (`seg-INDEX.log`) of records `INDEX\tINSTANCE\tSEQ\tPAYLOAD\n` (a payload is one JSON
/// line), and `acked`, the highest index acknowledged with every one before it. A segment goes once all of it is
/// acknowledged; past `maxBytes` the oldest goes anyway, and what it held unacknowledged is counted as dropped.
/// Used by its sink's thread only.
final class Spool {
    struct Record {
        var index: Int
        var instance: String
        var seq: Int
        var payload: String
    }

    let folder: String
    let maxBytes: Int
    /// Records not yet acknowledged, in order.
    private(set) var pending: [Record] = []
    private var pendingStart = 0
    private(set) var acked = 0
    private var ackedOutOfOrder = Set<Int>()
    private(set) var nextIndex = 1
    /// Events dropped because the spool was full (oldest first).
    private(set) var dropped = 0
    /// The highest seq of each instance found on disk (the stamper continues after it).
    private(set) var lastSeq: [String: Int] = [:]
    private var segments: [(first: Int, path: String, bytes: Int)] = []
    private var current: FileHandle? = nil
    private var ackDirty = false
    private var lockDescriptor: Int32 = -1
    private var lastAckWrite = ContinuousClock.now
    /// Segments are small against the bound, so that a full spool drops only its oldest part.
    let segmentBytes: Int

    /// Opens (or creates) the folder and reads what an earlier life left unacknowledged.
    /// - Throws: ``BarscopeError/badInput`` naming the folder when it cannot be made or written.
    init(folder: String, maxBytes: Int) throws {
        self.folder = folder
        self.maxBytes = max(maxBytes, 64 << 10)
        segmentBytes = min(4 << 20, max(16 << 10, self.maxBytes / 8))
        let fm = FileManager.default
        // Made one level at a time, so that the reason is the system's own (a read-only parent, no such device).
        var made = folder.hasPrefix("/") ? "" : "."
        for part in folder.split(separator: "/") {
            made += "/" + part
            if mkdir(made, 0o755) != 0 && errno != EEXIST {
                throw BarscopeError.badInput(
                    "--spool \(folder): cannot make the folder (\(made): \(String(cString: strerror(errno))))")
            }
        }
        let probe = (folder as NSString).appendingPathComponent(".write-test")
        guard fm.createFile(atPath: probe, contents: Data()) else {
            throw BarscopeError.badInput("--spool \(folder): the folder is not writable")
        }
        try? fm.removeItem(atPath: probe)
        // One process per spool: two would write the same segment names and each other's acknowledgements.
        lockDescriptor = open((folder as NSString).appendingPathComponent("lock"), O_RDWR | O_CREAT, 0o644)
        guard lockDescriptor >= 0, flock(lockDescriptor, LOCK_EX | LOCK_NB) == 0 else {
            if lockDescriptor >= 0 { Glibc.close(lockDescriptor) }
            throw BarscopeError.badInput(
                "--spool \(folder): in use by another barscope (give each process its own --spool or --node)")
        }
        if let text = FileContents.text(atPath: path("acked")),
            let n = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            acked = n
        }
        let names = ((try? fm.contentsOfDirectory(atPath: folder)) ?? []).filter {
            $0.hasPrefix("seg-") && $0.hasSuffix(".log")
        }
        let sorted = names.compactMap { n -> (Int, String)? in
            Int(n.dropFirst(4).dropLast(4)).map { ($0, n) }
        }.sorted { $0.0 < $1.0 }
        nextIndex = acked + 1
        for (first, name) in sorted {
            let p = path(name)
            guard let data = FileContents.read(atPath: p) else { continue }
            // An empty segment (rolled, never written) is left over: it goes, so that no name is used twice.
            if data.isEmpty {
                try? fm.removeItem(atPath: p)
                continue
            }
            segments.append((first, p, data.count))
            for line in data.split(separator: 10) {
                let fields = line.split(separator: 9, maxSplits: 3, omittingEmptySubsequences: false)
                guard fields.count == 4, let index = Int(String(decoding: fields[0], as: UTF8.self)),
                    let seq = Int(String(decoding: fields[2], as: UTF8.self))
                else { continue }
                let instance = String(decoding: fields[1], as: UTF8.self)
                lastSeq[instance] = max(lastSeq[instance] ?? 0, seq)
                nextIndex = max(nextIndex, index + 1)
                if index > acked {
                    pending.append(
                        Record(
                            index: index, instance: instance, seq: seq,
                            payload: String(decoding: fields[3], as: UTF8.self)))
                }
            }
        }
        pending.sort { $0.index < $1.index }
        removeAckedSegments()
    }

    private func path(_ name: String) -> String { (folder as NSString).appendingPathComponent(name) }

    /// Records not yet acknowledged.
    var depth: Int { pending.count - pendingStart }
    var unacknowledged: ArraySlice<Record> { pending[pendingStart...] }
    var bytes: Int { segments.reduce(0) { $0 + $1.bytes } }

    /// Writes one event; it is the broker's to acknowledge from now on.
    /// - Returns: false when it could not be written (the disk is full): the caller counts it.
    @discardableResult
    func append(instance: String, seq: Int, payload: String) -> Bool {
        let index = nextIndex
        let line = Data("\(index)\t\(instance)\t\(seq)\t\(payload)\n".utf8)
        if current == nil || (segments.last?.bytes ?? 0) + line.count > segmentBytes {
            roll(first: index)
        }
        guard let current else { return false }
        do { try current.write(contentsOf: line) } catch { return false }
        segments[segments.count - 1].bytes += line.count
        nextIndex += 1
        pending.append(Record(index: index, instance: instance, seq: seq, payload: payload))
        lastSeq[instance] = max(lastSeq[instance] ?? 0, seq)
        trimToSize()
        return true
    }

    private func roll(first: Int) {
        try? current?.close()
        let p = path(String(format: "seg-%012d.log", first))
        // The same name twice would make one entry's removal delete the other's file.
        if segments.last?.path == p { segments.removeLast() }
        _ = FileManager.default.createFile(atPath: p, contents: nil)
        current = FileHandle(forWritingAtPath: p)
        _ = try? current?.seekToEnd()
        segments.append((first, p, 0))
    }

    func isAcknowledged(_ index: Int) -> Bool { index <= acked || ackedOutOfOrder.contains(index) }

    /// The broker has this record (acknowledgements may come out of order).
    func acknowledge(_ index: Int) {
        guard index > acked else { return }
        ackedOutOfOrder.insert(index)
        while ackedOutOfOrder.remove(acked + 1) != nil { acked += 1 }
        while pendingStart < pending.count && pending[pendingStart].index <= acked { pendingStart += 1 }
        // What is acknowledged goes from memory in batches.
        if pendingStart > 4096 && pendingStart * 2 > pending.count {
            pending.removeFirst(pendingStart)
            pendingStart = 0
        }
        ackDirty = true
        if ContinuousClock.now - lastAckWrite > .milliseconds(200) { flushAcks() }
    }

    /// Writes `acked` (atomically) and removes the segments it covers.
    func flushAcks() {
        guard ackDirty else { return }
        ackDirty = false
        lastAckWrite = ContinuousClock.now
        let tmp = path("acked.tmp")
        if FileManager.default.createFile(atPath: tmp, contents: Data("\(acked)\n".utf8)) {
            _ = rename(tmp, path("acked"))
        }
        removeAckedSegments()
    }

    private func removeAckedSegments() {
        // A segment is covered when the next one starts at or below acked + 1 (every record in it is acknowledged).
        while segments.count > 1, segments[1].first <= acked + 1 {
            try? FileManager.default.removeItem(atPath: segments[0].path)
            segments.removeFirst()
        }
        if segments.count == 1, depth == 0, segments[0].bytes > segmentBytes / 4, current != nil {
            // All acknowledged: start a fresh segment, the old one goes.
            let old = segments[0].path
            roll(first: nextIndex)
            segments.removeFirst()
            try? FileManager.default.removeItem(atPath: old)
        }
    }

    /// Past the bound: the oldest segment goes, acknowledged or not.
    private func trimToSize() {
        while bytes > maxBytes, segments.count > 1 {
            let gone = segments.removeFirst()
            try? FileManager.default.removeItem(atPath: gone.path)
            let limit = segments.first!.first
            var lost = 0
            while pendingStart < pending.count && pending[pendingStart].index < limit {
                pendingStart += 1
                lost += 1
            }
            dropped += lost
            if pendingStart > 4096 && pendingStart * 2 > pending.count {
                pending.removeFirst(pendingStart)
                pendingStart = 0
            }
            if limit - 1 > acked {
                acked = limit - 1
                ackedOutOfOrder = ackedOutOfOrder.filter { $0 > acked }
                ackDirty = true
            }
        }
    }

    func close() {
        flushAcks()
        try? current?.synchronize()
        try? current?.close()
        current = nil
        if lockDescriptor >= 0 {
            Glibc.close(lockDescriptor)
            lockDescriptor = -1
        }
    }
}
