import TestSupport
import Testing

@testable import Barscope

/// The run loop's rules, without GStreamer: inputs in, actions out.
@Suite(.suiteLimit)
struct RunLoopTests {
    func machine(watchdog: Double? = nil, firstPicture: Double? = nil) -> RunLoop {
        RunLoop(
            options: .init(
                watchdogSeconds: watchdog, firstPictureSeconds: firstPicture, quietSeconds: 10, inputName: "cam"),
            now: 0)
    }

    @Test func endOfStreamFinishes() {
        var m = machine()
        #expect(m.handle(.bus(.playing)) == [.reached(.playing)])
        #expect(m.handle(.bus(.endOfStream)) == [.finish])
        #expect(!m.interrupted)
        // Nothing after the end.
        #expect(m.handle(.tick(now: 100)) == [])
    }

    @Test func stopSendsEndOfStreamOnceAndWaitsForIt() {
        var m = machine()
        let first = m.handle(.stop(now: 1, deadline: 1000))
        #expect(first.contains(.sendEOS))
        #expect(m.interrupted)
        // A second request while finishing sends nothing more; the end of stream then finishes.
        #expect(m.handle(.stop(now: 2, deadline: 1000)) == [])
        #expect(m.handle(.bus(.endOfStream)) == [.finish])
    }

    /// Defect 4: a slow recording is waited for while it makes progress; only a quiet stretch (or the caller's
    /// deadline) ends the wait.
    @Test func stopWaitsWhileThingsMove() {
        var m = machine()
        _ = m.handle(.stop(now: 0, deadline: 1000))
        for t in stride(from: 5.0, through: 60, by: 5) {
            #expect(m.handle(.progress(now: t)) == [])
            #expect(m.handle(.tick(now: t + 0.1)) == [], "still finishing at \(t) s: the recording moves")
        }
        #expect(m.handle(.tick(now: 69)) == [])
        let quiet = m.handle(.tick(now: 70.5))
        #expect(quiet.last == .finish, "nothing moved for 10 s: \(quiet)")
    }

    @Test func theCallersDeadlineBoundsTheWait() {
        var m = machine()
        _ = m.handle(.stop(now: 0, deadline: 12))
        _ = m.handle(.progress(now: 11))
        #expect(m.handle(.tick(now: 11.5)) == [])
        #expect(m.handle(.tick(now: 12)).last == .finish)
    }

    @Test func stopNowFinishesAtOnce() {
        var m = machine()
        _ = m.handle(.stop(now: 0, deadline: 1000))
        #expect(m.handle(.stopNow) == [.finish])
        #expect(m.interrupted)
    }

    @Test func stopWhilePausedResumesFirst() {
        var m = machine()
        #expect(m.handle(.pause(true, now: 1)) == [.setPaused])
        #expect(m.handle(.pause(true, now: 2)) == [], "already paused")
        let actions = m.handle(.stop(now: 3, deadline: 100))
        #expect(actions.first == .setPlaying && actions.last == .sendEOS, "\(actions)")
        // Pausing while finishing does nothing.
        #expect(m.handle(.pause(true, now: 4)) == [])
    }

    @Test func watchdogFailsAStalledLiveSource() {
        var m = machine(watchdog: 5)
        _ = m.handle(.frame(now: 1))
        #expect(m.handle(.tick(now: 5.9)) == [])
        #expect(m.handle(.tick(now: 6.1)) == [.fail(.streamStalled(input: "cam", seconds: 5))])
    }

    /// Frames keep coming but nothing is scanned: the scanning is stuck, reported as such (and restarted by the
    /// policy), not left hanging.
    @Test func stuckScanningIsAFault() {
        var m = machine(watchdog: 5)
        for t in stride(from: 0.5, through: 5.0, by: 0.5) {
            _ = m.handle(.frame(now: t))
            _ = m.handle(.scanned(now: min(t, 1)))
            #expect(m.handle(.tick(now: t)) == [], "\(t)")
        }
        _ = m.handle(.frame(now: 6))
        #expect(m.handle(.tick(now: 6.1)) == [.fail(.scanningStalled(input: "cam", seconds: 5))])
    }

    @Test func aPausedStreamIsNotStalled() {
        var m = machine(watchdog: 5)
        _ = m.handle(.pause(true, now: 0))
        #expect(m.handle(.tick(now: 60)) == [])
        #expect(m.handle(.pause(false, now: 60)) == [.setPlaying])
        #expect(m.handle(.tick(now: 64)) == [], "the watchdog counts from the resume")
        #expect(m.handle(.tick(now: 65.5)).first == .fail(.streamStalled(input: "cam", seconds: 5)))
    }

    @Test func aSilentFileIsOpenedAgain() {
        var m = machine(firstPicture: 5)
        #expect(m.handle(.tick(now: 4)) == [])
        #expect(m.handle(.tick(now: 5.5)) == [.reopen])
        var fine = machine(firstPicture: 5)
        _ = fine.handle(.frame(now: 0.5))
        #expect(fine.handle(.tick(now: 60)) == [], "a picture came: no reopening, and a file has no watchdog")
    }

    @Test func errorsAndFatalProblemsFail() {
        var m = machine()
        #expect(m.handle(.bus(.warning(message: "w", source: "x"))) == [.emit(.warning(message: "w", source: "x"))])
        #expect(m.handle(.bus(.error(.badInput("bad")))) == [.fail(.badInput("bad"))])
        var n = machine()
        #expect(n.handle(.fatal(.badValue("viewfinder"))) == [.fail(.badValue("viewfinder"))])
    }

    @Test func damageIsSkippedUnlessTheUserEndedTheStream() {
        var m = machine()
        #expect(m.handle(.bus(.damage)) == [.seekPastDamage])
        _ = m.handle(.stop(now: 0, deadline: 100))
        #expect(m.handle(.bus(.damage)) == [])
    }

    /// The loop sleeps until the machine's next deadline: the first tick at or past it decides, one before it does
    /// nothing, and every input that can put it off does.
    @Test func theNextTickIsWhenATickCouldDecide() {
        let file = machine()
        #expect(file.nextTick == nil, "a file without checks waits on its bus alone")
        var live = machine(watchdog: 5)
        #expect(live.nextTick == 5)
        _ = live.handle(.frame(now: 3))
        _ = live.handle(.scanned(now: 4))
        #expect(live.nextTick == 8, "the frame at 3 puts the stall off to 8 (scanned at 4: 9)")
        #expect(live.handle(.tick(now: 7.99)) == [])
        #expect(live.handle(.tick(now: 8.01)) == [.fail(.streamStalled(input: "cam", seconds: 5))])
        #expect(live.nextTick == nil, "done")

        var opening = machine(firstPicture: 4)
        #expect(opening.nextTick == 4)
        _ = opening.handle(.frame(now: 1))
        #expect(opening.nextTick == nil, "a first picture came")

        var paused = machine(watchdog: 5)
        _ = paused.handle(.pause(true, now: 1))
        #expect(paused.nextTick == nil, "a paused stream is not watched")

        var stopping = machine()
        _ = stopping.handle(.stop(now: 2, deadline: 30))
        #expect(stopping.nextTick == 12, "quiet for 10 s after the stop")
        _ = stopping.handle(.progress(now: 25))
        #expect(stopping.nextTick == 30, "the caller's deadline comes first")
    }
}
