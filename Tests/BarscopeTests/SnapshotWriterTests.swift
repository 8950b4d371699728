import CCairo
import Foundation
import TestSupport
import Testing

@testable import Barscope

/// Snapshots written off the streaming thread: every frame handed over is either a PNG on disk, with its event, or
/// dropped and counted; a dropped read cycle's evidence is named; the end waits until every queued one is written.
@Suite(.suiteLimit) struct SnapshotWriterTests {
    @Test func everyFrameIsWrittenOrCountedAsDropped() throws {
        let folder = NSTemporaryDirectory() + "snapshots-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let events = Locked<[Event]>([])
        let writer = SnapshotWriter(folder: folder, capacity: 2) { e in events.withLock { $0.append(e) } }
        let surface = try #require(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1920, 1080))
        defer { cairo_surface_destroy(surface) }
        let cr = cairo_create(surface)
        cairo_set_source_rgb(cr, 0.2, 0.6, 0.9)
        cairo_paint(cr)
        cairo_destroy(cr)
        cairo_surface_flush(surface)
        // Handed over faster than 1080p PNGs are encoded: some must be dropped.
        let handed = 40
        var queued = 0
        for frame in 0..<handed {
            let due = FrameLedger.Snapshot(
                frame: frame, ptsNs: UInt64(frame) * 33_333_333, tracks: [frame + 1], names: ["cycle-\(frame).png"])
            if writer.submit(surface, due: due) { queued += 1 }
        }
        writer.finish()
        let log = events.withLock { $0 }
        let written = log.compactMap { e -> String? in
            if case .snapshot(_, _, let path, _) = e { return path }
            return nil
        }
        let warnings = log.compactMap { e -> String? in
            if case .warning(let m, _) = e { return m }
            return nil
        }
        #expect(queued >= 1 && queued < handed, "\(queued) of \(handed) queued")
        // Each queued frame is two files (its track's and its cycle's), each with its event, each a PNG of the frame.
        #expect(written.count == 2 * queued, "\(written.count) snapshot events for \(queued) frames")
        for path in written {
            let png = try #require(cairo_image_surface_create_from_png(path))
            #expect(
                cairo_image_surface_get_width(png) == 1920 && cairo_image_surface_get_height(png) == 1080, "\(path)")
            cairo_surface_destroy(png)
        }
        let dropped = handed - queued
        #expect(warnings.filter { $0.hasSuffix("not written (snapshots dropped)") }.count == dropped)
        #expect(warnings.contains("\(dropped) snapshots dropped: written slower than codes appeared"), "\(warnings)")
        #expect(
            !writer.submit(surface, due: .init(frame: 99, ptsNs: nil, tracks: [1])), "nothing is taken after the end")
    }
}
