import Barscope
import Foundation
import TestSupport
import Testing

/// Many streams in one process, on the shared scanning pool: real live pipelines (the demo source paced like a
/// camera), each its own controller, as `barscope serve` runs them.
@Suite(.suiteLimit) struct ManyStreamsTests {
    /// Four live streams at once, every frame scanned in full (no viewfinder, every-frame events): each keeps
    /// its frames accounted, frames in = scanned + dropped, and each stream is served.
    @Test func fourLiveStreamsKeepTheirFramesAccounted() throws {
        let controllers = (0..<4).map { i in
            var c = RunConfiguration()
            c.input = .demo(DemoOptions(size: Size(width: 960, height: 540), fps: 30, frames: 0, live: true))
            c.viewfinder = .off
            c.everyFrame = true
            return ScanController(name: "cam\(i)", configuration: c)
        }
        for c in controllers { c.start() }
        // Run until every stream has scanned 30 frames (a loaded machine takes longer, a sanitizer far longer).
        let wanted = Sanitizer.atLeast(30, "frames each of four live streams must scan")
        pollUntil(60, every: 0.1) { controllers.allSatisfy({ $0.totals.frames >= wanted }) }
        // While they run, the pool is shared by all four.
        #expect(ScanPool.shared.status.lanes >= 4)
        for c in controllers { #expect(c.stop(timeout: 30)) }
        for c in controllers {
            let t = c.totals
            #expect(t.frames >= wanted, "\(c.name): \(t)")
            #expect(
                t.admitted == t.frames + t.dropped,
                "\(c.name): in \(t.admitted), scanned \(t.frames), dropped \(t.dropped)")
            #expect(c.summary?.frames == t.frames)
        }
    }
}
