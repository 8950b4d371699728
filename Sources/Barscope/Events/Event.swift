import Foundation

/// What a run reports, one JSON object per line (JSON Lines). Every event has `event`; frame events have
/// `pts_ns` (the buffer's own presentation time, never rebased) and `frame` (decoded frames counted from 0).
/// Coordinates are full-frame pixels whatever the crop.
/// A state the pipeline reached, as the `state` event says it.
public enum PipelineState: String, Sendable {
    case playing
    case paused
}

public enum Event: Sendable, Equatable {
    /// One code in one frame (`--every-frame`).
    case detection(frame: Int, ptsNs: UInt64?, detection: Detection, track: Int?)
    /// A code seen for the first time (a new track).
    case appeared(frame: Int, ptsNs: UInt64?, detection: Detection, track: Int)
    /// A tracked code no longer seen.
    case lost(frame: Int, ptsNs: UInt64?, track: Int, type: String, data: String, framesSeen: Int)
    /// The annotated frame on which codes appeared was saved as PNG (`--snapshots`).
    case snapshot(frame: Int, ptsNs: UInt64?, path: String, tracks: [Int])
    /// A network source failed; the pipeline is rebuilt after `delaySeconds`.
    case reconnecting(attempt: Int, delaySeconds: Double, reason: String)
    /// Frames flow again after `attempts` reconnection attempts.
    case recovered(attempts: Int)
    /// The attempts ran out.
    case gaveUp(attempts: Int, reason: String)
    /// The annotated stream is served over RTSP at this URL (`--serve-rtsp`).
    case serving(url: String)
    /// The pipeline changed state (`playing`, `paused`, ...).
    case state(String)
    /// A viewfinder change took effect on this frame (the start of its animation, when animated), or the stream's
    /// size changed and the region followed it; nil region: the whole frame.
    case viewfinder(frame: Int, ptsNs: UInt64?, region: PixelRect?)
    /// Something went wrong but the run goes on.
    case warning(message: String, source: String?)
    /// The run stops.
    case error(message: String, source: String?)
    /// A read cycle closed: its codes and its verdict, and the snapshot that shows it (`--snapshots`).
    case cycle(CycleResult, snapshot: String?)
    /// A broker (`--publish`) answered again, or was lost: events wait in the spool meanwhile.
    case broker(connected: Bool, sink: String, reason: String?)
    /// End of stream, with counts and, when measured, the latency from a frame's arrival to its results.
    /// `unreported`: reads never reported, held for a confirmation that did not come or disagreeing with a code
    /// read at their place (given when there were any).
    case eos(frames: Int, codes: Int, latencyP50Ms: Double? = nil, latencyP95Ms: Double? = nil, unreported: Int = 0)

    public var name: String {
        switch self {
        case .detection: return "detection"
        case .appeared: return "appeared"
        case .lost: return "lost"
        case .snapshot: return "snapshot"
        case .serving: return "serving"
        case .reconnecting: return "reconnecting"
        case .recovered: return "recovered"
        case .gaveUp: return "gave-up"
        case .state: return "state"
        case .viewfinder: return "viewfinder"
        case .warning: return "warning"
        case .error: return "error"
        case .cycle: return "cycle"
        case .broker(let connected, _, _): return connected ? "broker-connected" : "broker-disconnected"
        case .eos: return "eos"
        }
    }

    /// The event as a JSON object, fields in the order DESIGN.md shows.
    public var json: JSONValue {
        var f: [(String, JSONValue)] = [("event", .string(name))]
        func pts(_ p: UInt64?) -> JSONValue { p.map { .int(Int(clamping: $0)) } ?? .null }
        switch self {
        case .detection(let frame, let ptsNs, let d, let track):
            f += [("frame", .int(frame)), ("pts_ns", pts(ptsNs))]
            f += Event.fields(of: d)
            if let track { f.append(("track", .int(track))) }
        case .appeared(let frame, let ptsNs, let d, let track):
            f += [("track", .int(track)), ("frame", .int(frame)), ("pts_ns", pts(ptsNs))]
            f += Event.fields(of: d)
        case .lost(let frame, let ptsNs, let track, let type, let data, let framesSeen):
            f += [
                ("track", .int(track)), ("frame", .int(frame)), ("pts_ns", pts(ptsNs)), ("type", .string(type)),
                ("data", .string(data)), ("frames_seen", .int(framesSeen)),
            ]
        case .snapshot(let frame, let ptsNs, let path, let tracks):
            f += [
                ("frame", .int(frame)), ("pts_ns", pts(ptsNs)), ("path", .string(path)),
                ("tracks", .array(tracks.map { .int($0) })),
            ]
        case .serving(let url): f.append(("url", .string(url)))
        case .reconnecting(let attempt, let delay, let reason):
            f += [("attempt", .int(attempt)), ("delay_s", .double(delay)), ("reason", .string(reason))]
        case .recovered(let attempts): f.append(("attempts", .int(attempts)))
        case .gaveUp(let attempts, let reason): f += [("attempts", .int(attempts)), ("reason", .string(reason))]
        case .state(let s): f.append(("state", .string(s)))
        case .viewfinder(let frame, let ptsNs, let r):
            f += [("frame", .int(frame)), ("pts_ns", pts(ptsNs))]
            f.append(
                (
                    "region",
                    r.map {
                        .object([
                            ("x", .int($0.x)), ("y", .int($0.y)), ("width", .int($0.width)),
                            ("height", .int($0.height)),
                        ])
                    } ?? .null
                ))
        case .warning(let m, let s), .error(let m, let s):
            f.append(("message", .string(m)))
            if let s { f.append(("source", .string(s))) }
        case .cycle(let c, let snapshot):
            f += [
                ("cycle", .int(c.cycle)), ("label", c.label.map { .string($0) } ?? .null),
                ("result", .string(c.outcome.rawValue)),
                (
                    "codes",
                    .array(
                        c.codes.map {
                            .object([
                                ("type", .string($0.type)), ("data", .string($0.data)),
                                ("frames_seen", .int($0.framesSeen)), ("first_pts_ns", pts($0.firstPtsNs)),
                                ("last_pts_ns", pts($0.lastPtsNs)), ("expected", .bool($0.expected)),
                            ])
                        })
                ),
                ("start_pts_ns", pts(c.startPtsNs)), ("end_pts_ns", pts(c.endPtsNs)),
                ("closed_by", .string(c.closedBy.rawValue)),
            ]
            if let snapshot { f.append(("snapshot", .string(snapshot))) }
        case .broker(_, let sink, let reason):
            f.append(("sink", .string(sink)))
            if let reason { f.append(("reason", .string(reason))) }
        case .eos(let frames, let codes, let p50, let p95, let unreported):
            f += [("frames", .int(frames)), ("codes", .int(codes))]
            if let p50, let p95 {
                func ms(_ v: Double) -> JSONValue { .double((v * 10).rounded() / 10) }
                f.append(("latency_ms", .object([("p50", ms(p50)), ("p95", ms(p95))])))
            }
            if unreported > 0 { f.append(("unreported_reads", .int(unreported))) }
        }
        return .object(f)
    }

    /// One line of JSON Lines (no trailing newline).
    public var jsonLine: String { json.encoded() }

    /// A part of a structured append: `"sequence":{"index":0,"count":4,"id":"42"}` (`id`: the parity, when an
    /// engine gave it); the joined message: `"sequence":{"count":4,"id":"42","joined":true}`. Nothing otherwise.
    static func sequence(of d: Detection) -> [(String, JSONValue)] {
        guard let s = d.sequence else { return [] }
        var f: [(String, JSONValue)] = []
        if let index = s.index { f.append(("index", .int(index))) }
        f.append(("count", .int(s.count)))
        f.append(("id", s.id.map { .string($0) } ?? .null))
        if s.index == nil { f.append(("joined", .bool(true))) }
        return [("sequence", .object(f))]
    }

    static func fields(of d: Detection) -> [(String, JSONValue)] {
        func num(_ v: Double) -> JSONValue { v == v.rounded() ? .int(Int(v)) : .double((v * 10).rounded() / 10) }
        // A binary payload: the exact bytes as base64, the encoding named; `data` keeps a readable rendering.
        let payload: [(String, JSONValue)] =
            d.binary.map {
                [("encoding", .string("binary")), ("data_base64", .string(Data($0).base64EncodedString()))]
            }
            ?? []
        return [("type", .string(d.type)), ("data", .string(d.data))] + payload + sequence(of: d) + [
            ("quality", .int(d.quality)),
            ("polygon", .array(d.polygon.map { .array([num($0.x), num($0.y)]) })),
            (
                "bounds",
                .object([
                    ("x", .int(d.bounds.x)), ("y", .int(d.bounds.y)), ("width", .int(d.bounds.width)),
                    ("height", .int(d.bounds.height)),
                ])
            ),
            ("in_viewfinder", .bool(d.inViewfinder)),
        ]
    }
}
