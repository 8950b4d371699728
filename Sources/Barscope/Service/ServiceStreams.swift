import Foundation
import Synchronization

/// What the service streams to its clients, on the main loop's thread: each instance's events as Server-Sent Events,
/// its newest annotated frame, and MJPEG. A slow client is disconnected (its unsent chunks pile up past a bound);
/// it never slows an instance: events reach the streams through the instance's ring, frames through its tap.
final class ServiceStreams: @unchecked Sendable {
    // Sendable: `clients` and `mjpegs` are touched on the main loop's thread only; `due` is a lock.
    private let service: ScanService

    private final class EventClient {
        let instance: ServiceInstance
        let exchange: HTTPExchange
        var sent: Int
        init(_ i: ServiceInstance, _ x: HTTPExchange, since: Int) {
            instance = i
            exchange = x
            sent = since
        }
    }
    private final class FrameClient {
        let instance: ServiceInstance
        let exchange: HTTPExchange
        let interval: Duration
        var next = ContinuousClock.now
        var generation = 0
        init(_ i: ServiceInstance, _ x: HTTPExchange, fps: Double) {
            instance = i
            exchange = x
            interval = .milliseconds(Int(1000 / fps))
        }
    }
    /// A console's one stream: every instance's events, and everyone's status each second (a browser keeps at most
    /// six connections to a host, so a page of eight cameras cannot hold a stream per instance).
    private final class ConsoleClient {
        let exchange: HTTPExchange
        /// The last event sent, by instance id.
        var sent: [String: Int] = [:]
        init(_ x: HTTPExchange) { exchange = x }
    }
    private var clients: [EventClient] = []
    private var consoles: [ConsoleClient] = []
    private var mjpegs: [FrameClient] = []
    /// Instances with events not yet sent to their streams (coalesces the calls onto the main loop).
    private let due = Locked<Set<String>>([])
    /// Chunks a client may leave unsent before it is let go.
    static let maxBacklog = 256
    static let boundary = "barscope-frame"

    init(service: ScanService) {
        self.service = service
        service.onEvents.withLock {
            $0 = { [weak self] instance in self?.eventsArrived(instance) }
        }
        // MJPEG pacing and SSE keep-alives (a comment line every 15 s finds clients that went away).
        var ticks = 0
        MainLoop.every(milliseconds: 40) { [weak self] in
            guard let self else { return false }
            ticks += 1
            self.pace()
            if ticks % 25 == 0 { self.pushStatus(to: self.consoles) }
            if ticks % 375 == 0 { self.keepAlive() }
            return true
        }
    }

    // MARK: Server-Sent Events

    func events(_ i: ServiceInstance, since: Int, _ x: HTTPExchange) {
        x.beginStream(contentType: "text/event-stream", headers: [("X-Accel-Buffering", "no")])
        // An id from before the service restarted (the numbering starts again): everything held.
        let client = EventClient(i, x, since: since > i.events.last ? 0 : since)
        clients.append(client)
        x.onClose = { [weak self, weak client] in self?.clients.removeAll { $0 === client } }
        // The first comment opens the stream at once; then what is held since `since`.
        x.write(Array(": barscope events of \(i.id)\n\n".utf8))
        flush(i)
    }

    /// Any thread: an instance has new events.
    private func eventsArrived(_ instance: ServiceInstance) {
        let first = due.withLock { $0.insert(instance.id).inserted }
        guard first else { return }
        MainLoop.run { [weak self] in
            guard let self else { return }
            self.due.withLock { _ = $0.remove(instance.id) }
            self.flush(instance)
        }
    }

    /// Every instance's events, the newest `backlog` of each first, as `data: {"instance", "seq", "event"}`; and
    /// `event: status` with every status object, each second.
    func allEvents(backlog: Int, _ x: HTTPExchange) {
        x.beginStream(contentType: "text/event-stream", headers: [("X-Accel-Buffering", "no")])
        let client = ConsoleClient(x)
        for i in service.instances { client.sent[i.id] = max(0, i.events.last - backlog) }
        consoles.append(client)
        x.onClose = { [weak self, weak client] in self?.consoles.removeAll { $0 === client } }
        x.write(Array(": barscope events of every instance\n\n".utf8))
        pushStatus(to: [client])
        for i in service.instances { flush(i) }
    }

    private func pushStatus(to consoles: [ConsoleClient]) {
        guard !consoles.isEmpty else { return }
        let all = Array("event: status\ndata: \(JSONValue.array(service.instances.map(\.status)).encoded())\n\n".utf8)
        for c in consoles {
            c.exchange.write(all)
            if c.exchange.backlog > Self.maxBacklog { c.exchange.drop() }
        }
    }

    private func flush(_ instance: ServiceInstance) {
        for c in consoles {
            let items = instance.events.since(c.sent[instance.id] ?? 0)
            guard let last = items.last else { continue }
            var text = ""
            let head = "data: {\"instance\":" + JSONValue.string(instance.id).encoded() + ",\"seq\":"
            for (seq, line) in items { text += head + "\(seq),\"event\":\(line)}\n\n" }
            c.sent[instance.id] = last.0
            c.exchange.write(Array(text.utf8))
            if c.exchange.backlog > Self.maxBacklog { c.exchange.drop() }
        }
        for c in clients where c.instance === instance {
            let items = instance.events.since(c.sent)
            guard !items.isEmpty else { continue }
            var text = ""
            for (seq, line) in items { text += "id: \(seq)\ndata: \(line)\n\n" }
            c.sent = items.last!.0
            c.exchange.write(Array(text.utf8))
            if c.exchange.backlog > Self.maxBacklog { c.exchange.drop() }
        }
        // An instance that has ended closes its streams once they have everything.
        if instance.ended {
            for c in clients where c.instance === instance && c.sent >= instance.events.last { c.exchange.finish() }
        }
    }

    private func keepAlive() {
        for c in clients {
            c.exchange.write(Array(": keep-alive\n\n".utf8))
            if c.exchange.backlog > Self.maxBacklog { c.exchange.drop() }
            if c.instance.ended { flush(c.instance) }
        }
    }

    // MARK: Frames

    /// A PNG that `--snapshots` wrote, by its file name, from the instance's snapshot folder only.
    func snapshot(_ i: ServiceInstance, name: String, _ x: HTTPExchange) {
        guard let folder = i.snapshotFolder, name.hasSuffix(".png"), ScanService.isValidName(name) else {
            x.error(404, "\(i.id): no snapshot '\(name)'")
            return
        }
        x.deferAnswer()
        let path = (folder as NSString).appendingPathComponent(name)
        Thread.detachNewThread {
            let data = FileContents.read(atPath: path)
            MainLoop.run {
                if let data {
                    x.respond(200, contentType: "image/png", body: Array(data))
                } else {
                    x.error(404, "\(i.id): no snapshot '\(name)'")
                }
            }
        }
    }

    /// The newest annotated frame: a fresh one when the instance runs (encoding starts on request), waited for off
    /// the main loop, at most 2 s.
    func frame(_ i: ServiceInstance, _ x: HTTPExchange) {
        let tap = i.preview
        tap.want(for: 3)
        x.deferAnswer()
        let since = i.ended ? -1 : (tap.latest?.generation ?? 0)
        Thread.detachNewThread {
            let frame = since < 0 ? tap.latest : (tap.next(after: since, timeout: 2) ?? tap.latest)
            MainLoop.run {
                if let frame {
                    x.respond(200, contentType: "image/jpeg", body: frame.jpeg)
                } else {
                    x.error(404, "\(i.id): no frame yet")
                }
            }
        }
    }

    func mjpeg(_ i: ServiceInstance, fps: Double, _ x: HTTPExchange) {
        x.beginStream(contentType: "multipart/x-mixed-replace; boundary=\(Self.boundary)")
        let client = FrameClient(i, x, fps: fps)
        mjpegs.append(client)
        i.preview.watch()
        x.onClose = { [weak self, weak client] in
            i.preview.unwatch()
            self?.mjpegs.removeAll { $0 === client }
        }
    }

    private func pace() {
        let now = ContinuousClock.now
        for c in mjpegs where now >= c.next {
            guard let frame = c.instance.preview.latest, frame.generation > c.generation else {
                if c.instance.ended { c.exchange.finish() }
                continue
            }
            c.next = now + c.interval
            c.generation = frame.generation
            let head = "--\(Self.boundary)\r\nContent-Type: image/jpeg\r\nContent-Length: \(frame.jpeg.count)\r\n\r\n"
            c.exchange.write(Array(head.utf8) + frame.jpeg + Array("\r\n".utf8))
            if c.exchange.backlog > 8 { c.exchange.drop() }
        }
    }
}
