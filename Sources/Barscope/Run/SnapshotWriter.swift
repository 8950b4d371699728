import CCairo
import Foundation

/// Writes the snapshots of one run (`--snapshots DIR`) on a thread of its own: the overlay's streaming thread copies
/// the annotated frame and hands it over, and never waits for a PNG to be encoded or a disk to answer. At most
/// `capacity` frames wait; a frame handed over beyond that is dropped and counted: the first drop is said at once,
/// the total at the end.
final class SnapshotWriter: Sendable {
    /// One annotated frame's pixels (cairo's own format) and the files it goes to.
    struct Frame: Sendable {
        var pixels: [UInt8]
        let format: cairo_format_t
        let width: Int32
        let height: Int32
        let stride: Int32
        let due: FrameLedger.Snapshot
    }

    private struct Queue {
        var frames: [Frame] = []
        var finished = false
        var dropped = 0
    }

    private let queue = Locked(Queue())
    private let ready = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let emit: @Sendable (Event) -> Void
    private let folder: String
    let capacity: Int

    init(folder: String, capacity: Int = 8, emit: @escaping @Sendable (Event) -> Void) {
        self.folder = folder
        self.capacity = capacity
        self.emit = emit
        let thread = Thread { [self] in run() }
        thread.name = "barscope-snapshots"
        thread.start()
    }

    /// Copies the frame on `surface` (flushed by the caller) and queues it; false when it was dropped.
    @discardableResult
    func submit(_ surface: OpaquePointer, due: FrameLedger.Snapshot) -> Bool {
        let stride = cairo_image_surface_get_stride(surface)
        let height = cairo_image_surface_get_height(surface)
        guard let data = cairo_image_surface_get_data(surface), stride > 0, height > 0 else { return false }
        // Not copied when it would be dropped; counted when the queue filled or closed meanwhile.
        guard queue.withLock({ $0.frames.count < capacity && !$0.finished }) else { return drop(due) }
        let frame = Frame(
            pixels: Array(UnsafeBufferPointer(start: data, count: Int(stride) * Int(height))),
            format: cairo_image_surface_get_format(surface), width: cairo_image_surface_get_width(surface),
            height: height, stride: stride, due: due)
        let queued = queue.withLock { q -> Bool in
            guard q.frames.count < capacity && !q.finished else { return false }
            q.frames.append(frame)
            return true
        }
        guard queued else { return drop(due) }
        ready.signal()
        return true
    }

    private func drop(_ due: FrameLedger.Snapshot) -> Bool {
        if queue.withLock({ q -> Int in
            q.dropped += 1
            return q.dropped
        }) == 1 {
            emit(
                .warning(
                    message: "snapshots are written slower than codes appear: some are dropped", source: "snapshots"))
        }
        // A read cycle's event already named its evidence file: say that this one will not exist.
        for name in due.names {
            emit(
                .warning(
                    message: "\((folder as NSString).appendingPathComponent(name)): not written (snapshots dropped)",
                    source: "snapshots"))
        }
        return false
    }

    /// Writes what waits, then ends the thread; returns once every queued snapshot is on disk (or failed, said).
    func finish() {
        let first = queue.withLock { q -> Bool in
            defer { q.finished = true }
            return !q.finished
        }
        guard first else { return }
        ready.signal()
        done.wait()
        let dropped = queue.withLock { $0.dropped }
        if dropped > 0 {
            emit(
                .warning(
                    message: "\(dropped) snapshots dropped: written slower than codes appeared", source: "snapshots"))
        }
    }

    private func run() {
        while true {
            ready.wait()
            while var frame = queue.withLock({ $0.frames.isEmpty ? nil : $0.frames.removeFirst() }) {
                write(&frame)
            }
            if queue.withLock({ $0.finished && $0.frames.isEmpty }) {
                done.signal()
                return
            }
        }
    }

    /// (In place: the frame's pixels are its own once out of the queue, so cairo gets them without a copy.)
    private func write(_ frame: inout Frame) {
        let (format, width, height, stride, due) = (frame.format, frame.width, frame.height, frame.stride, frame.due)
        frame.pixels.withUnsafeMutableBufferPointer { buffer in
            guard
                let surface = cairo_image_surface_create_for_data(buffer.baseAddress, format, width, height, stride)
            else { return }
            defer { cairo_surface_destroy(surface) }
            var names = due.names
            if !due.tracks.isEmpty {
                names.insert(
                    String(
                        format: "frame-%06d-track-%@.png", due.frame, due.tracks.map(String.init).joined(separator: "-")
                    ),
                    at: 0)
            }
            for name in names {
                let path = (folder as NSString).appendingPathComponent(name)
                // A read cycle's evidence names no track: its cycle event names the file.
                let tracks = name.hasPrefix("frame-") ? due.tracks : []
                if cairo_surface_write_to_png(surface, path) == CAIRO_STATUS_SUCCESS {
                    emit(.snapshot(frame: due.frame, ptsNs: due.ptsNs, path: path, tracks: tracks))
                } else {
                    emit(.warning(message: "\(path): cannot write snapshot", source: "overlay"))
                }
            }
        }
    }
}
