/// The run loop's decisions as a pure state machine: inputs (a tick of the clock, a frame, a stop or pause request,
/// a bus message) in, actions (change state, send end of stream, emit an event, finish, fail) out. `ScanRun` feeds
/// it and performs the actions; the rules live here, tested without GStreamer (Tests/BarscopeTests/RunLoopTests).
///
/// Times are seconds on any monotonic clock, given with each input.
struct RunLoop: Sendable {
    struct Options: Sendable {
        /// A live source that sends no frame this long has stalled (nil: not watched, as a file).
        var watchdogSeconds: Double? = nil
        /// A file that gives no first picture this long after the start is opened again (nil: not checked).
        var firstPictureSeconds: Double? = nil
        /// While finishing (end of stream sent), nothing moving this long means it will not finish: stop.
        var quietSeconds: Double = 10
        /// The input as messages name it (credentials hidden).
        var inputName = ""
    }

    enum Input: Equatable, Sendable {
        case tick(now: Double)
        /// A frame reached the tee.
        case frame(now: Double)
        /// The scanner delivered a frame's results.
        case scanned(now: Double)
        /// Something moved downstream: a frame scanned, drawn or written (a slow recording still finishing).
        case progress(now: Double)
        /// Finish: end of stream first, so that recordings are complete; give up at `deadline` at the latest.
        case stop(now: Double, deadline: Double)
        /// Stop at once (a second signal, a deadline the caller set).
        case stopNow
        case pause(Bool, now: Double)
        case bus(Bus)
        /// A streaming thread found a problem that ends the run.
        case fatal(BarscopeError)
    }

    /// Bus messages, already mapped to what they mean to a run.
    enum Bus: Equatable, Sendable {
        case endOfStream
        case error(BarscopeError)
        case warning(message: String, source: String?)
        case playing
        case paused
        /// A file's demuxer gave up at damage: seek on past it.
        case damage
    }

    enum Action: Equatable, Sendable {
        /// The pipeline reached a state: the controller is told, and a `state` event emitted.
        case reached(PipelineState)
        case setPlaying
        case setPaused
        case sendEOS
        case seekPastDamage
        case emit(Event)
        /// The end: the stream ended, or the stop is over.
        case finish
        case fail(BarscopeError)
        /// No first picture: build the graph again, once (uridecodebin sometimes swallows its demuxer's error).
        case reopen
    }

    enum Phase: Equatable, Sendable {
        case running
        case paused
        /// End of stream sent; waiting for it while things move, until `deadline` at the latest.
        case finishing(lastMove: Double, deadline: Double)
        case done
    }

    let options: Options
    private(set) var phase = Phase.running
    /// Stopped by request (not at the stream's own end).
    private(set) var interrupted = false
    private var lastFrame: Double
    private var lastScan: Double
    private var sawFrame = false

    init(options: Options, now: Double) {
        self.options = options
        lastFrame = now
        lastScan = now
    }

    mutating func handle(_ input: Input) -> [Action] {
        guard phase != .done else { return [] }
        switch input {
        case .tick(let now): return tick(now)
        case .frame(let now):
            // The scanning clock starts with the first frame: there is nothing to scan before it.
            if !sawFrame { lastScan = max(lastScan, now) }
            lastFrame = now
            sawFrame = true
            return moved(now)
        case .progress(let now): return moved(now)
        case .scanned(let now):
            lastScan = now
            return moved(now)
        case .stop(let now, let deadline):
            switch phase {
            case .finishing(let last, let old):
                // A later stop may bring its deadline nearer, never further.
                phase = .finishing(lastMove: last, deadline: min(old, deadline))
                return []
            case .running, .paused:
                interrupted = true
                // End of stream cannot flow through a paused pipeline.
                let resume: [Action] = phase == .paused ? [.setPlaying] : []
                phase = .finishing(lastMove: now, deadline: deadline)
                return resume + [
                    .emit(
                        .warning(message: "stopping: finishing the recording (signal again to stop now)", source: nil)),
                    .sendEOS,
                ]
            case .done: return []
            }
        case .stopNow:
            interrupted = true
            phase = .done
            return [.finish]
        case .pause(let pause, let now):
            switch (phase, pause) {
            case (.running, true):
                phase = .paused
                return [.setPaused]
            case (.paused, false):
                phase = .running
                // A paused stream sends nothing: the watchdog counts from the resume.
                lastFrame = now
                lastScan = now
                return [.setPlaying]
            default: return []
            }
        case .fatal(let e):
            phase = .done
            return [.fail(e)]
        case .bus(let message): return bus(message)
        }
    }

    private mutating func bus(_ message: Bus) -> [Action] {
        switch message {
        case .endOfStream:
            phase = .done
            return [.finish]
        case .error(let e):
            phase = .done
            return [.fail(e)]
        case .warning(let m, let s): return [.emit(.warning(message: m, source: s))]
        case .playing: return [.reached(.playing)]
        case .paused: return [.reached(.paused)]
        case .damage:
            // The user's end of stream is not damage to skip.
            if case .finishing = phase { return [] }
            return [.seekPastDamage]
        }
    }

    /// The earliest time a tick could decide something (nil: only an input can): the run loop waits for its bus
    /// until then at the latest, and never wakes only to look.
    var nextTick: Double? {
        switch phase {
        case .finishing(let last, let deadline): return min(deadline, last + options.quietSeconds)
        case .running:
            var times: [Double] = []
            if let limit = options.firstPictureSeconds, !sawFrame { times.append(lastFrame + limit) }
            if let limit = options.watchdogSeconds { times += [lastFrame + limit, lastScan + limit] }
            return times.min()
        case .paused, .done: return nil
        }
    }

    private mutating func moved(_ now: Double) -> [Action] {
        if case .finishing(_, let deadline) = phase { phase = .finishing(lastMove: now, deadline: deadline) }
        return []
    }

    private mutating func tick(_ now: Double) -> [Action] {
        switch phase {
        case .finishing(let last, let deadline):
            if now >= deadline {
                phase = .done
                return [
                    .emit(.warning(message: "end of stream did not arrive in time; stopping", source: nil)), .finish,
                ]
            }
            if now - last >= options.quietSeconds {
                phase = .done
                return [
                    .emit(
                        .warning(
                            message: "end of stream did not arrive (nothing moved for \(Int(options.quietSeconds)) s); "
                                + "stopping", source: nil)), .finish,
                ]
            }
            return []
        case .running:
            let silent = now - lastFrame
            if let limit = options.firstPictureSeconds, !sawFrame, silent > limit {
                phase = .done
                return [.reopen]
            }
            if let limit = options.watchdogSeconds, silent > limit {
                phase = .done
                return [.fail(.streamStalled(input: options.inputName, seconds: Int(limit)))]
            }
            // Frames still come but none has been scanned for as long: the scanning is stuck, not the source.
            if let limit = options.watchdogSeconds, now - lastScan > limit {
                phase = .done
                return [.fail(.scanningStalled(input: options.inputName, seconds: Int(limit)))]
            }
            return []
        case .paused, .done: return []
        }
    }
}
