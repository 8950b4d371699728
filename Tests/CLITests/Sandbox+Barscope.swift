import Barscope
import Foundation
import TestSupport
import Testing

/// `barscope` and `echo` lines: the tool run to its end or stopped, or in the background reading a FIFO echo feeds.
extension Sandbox {
    func barscope(_ given: [String], _ command: DocumentedExamplesTests.Command, _ source: String) throws {
        var words = given
        let line = command.text
        if line.contains("/dev/video") { return skip(line, source, "needs a camera") }
        let sub = words.first ?? ""
        var pipeline: String? = nil
        if sub == "run", words.count > 1, !words[1].hasPrefix("-"), !words[1].contains("."),
            !words[1].contains("/"), words[1] != "demo"
        {
            pipeline = pipelineText(words[1])
        }
        let overridesInput = words.contains("--input") || words.contains { $0.hasPrefix("source.input=") }
        if let pipeline, !overridesInput, pipeline.contains("input = /dev/video") {
            return skip(line, source, "its pipeline reads a camera")
        }
        if line.contains("postgresql://") {
            return skip(line, source, "writes to the database it names (SightingsTests run a PostgreSQL server)")
        }
        if line.contains("--publish") {
            return skip(
                line, source, "publishes to the broker it names (PublishTests run --publish on a local mosquitto)")
        }
        if sub == "serve" {
            guard service == nil else { return }
            var extra = rerootWords(Array(words.dropFirst()))
            if extra.last == "&" { extra.removeLast() }
            let started = try Service(extra: extra)
            try #require(started.port > 0, "\(line)  [\(source)]: \(started.stderr)")
            service = started
            ran.append(source)
            return
        }
        if words.last == "&" { words.removeLast() }
        words = rerootWords(words)
        for (i, word) in words.enumerated() where word.hasPrefix("rtsp://") && !word.contains("127.0.0.1") {
            words[i] = try localRTSP(word)
        }
        for (i, word) in words.enumerated() {
            if let eq = word.firstIndex(of: "="), word[word.index(after: eq)...].hasPrefix("rtsp://") {
                words[i] = String(word[...eq]) + (try localRTSP(String(word[word.index(after: eq)...])))
            }
        }
        // A re-served stream on a port of its own (a documented port may be taken here).
        if let i = words.firstIndex(of: "--serve-rtsp"), i + 1 < words.count,
            let slash = words[i + 1].firstIndex(of: "/")
        {
            words[i + 1] = "127.0.0.1:0" + words[i + 1][slash...]
        }
        var environment = self.environment
        if words.contains("--display") || pipeline?.contains("[display]\nenabled = true") == true {
            if display == nil { display = try XServer() }
            environment["DISPLAY"] = display!.display
        }
        // A source without an end (a live demo of 0 frames, a camera's RTSP stream, which is reconnected when it
        // ends) runs a few seconds and is stopped as a user stops it: SIGINT, exit 130, the recording finished.
        let endless =
            (words.firstIndex(of: "--frames").map { $0 + 1 < words.count && words[$0 + 1] == "0" } ?? false)
            || (pipeline?.contains("frames = 0") ?? false) || words.contains { $0.contains("rtsp://") }
            || (pipeline?.contains("input = rtsp://") ?? false)
        let before = files()
        // A run reading commands from a FIFO runs in the background; the example's next lines write to it.
        if let i = words.firstIndex(of: "--control"), i + 1 < words.count, isFIFO(words[i + 1]) {
            let p = try start(words, environment)
            let events = words.firstIndex(of: "--events").map { words[$0 + 1] }
            reader = (p, line, source, events)
            return
        }
        let result = try execute(words, environment, stopAfter: endless ? 3 : nil)
        let fine: Int32 = endless ? 130 : 0
        #expect(result.status == fine, "\(line)  [\(source)]: exit \(result.status): \(result.stderr.suffix(600))")
        check(sub, words, result.stdout, since: before, line: line, source: source)
        ran.append(source)
    }

    func isFIFO(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO
    }

    private func start(_ words: [String], _ environment: [String: String]) throws -> Process {
        // Its events go to a file (the example names one); standard output is not read.
        let p = Tool.process(Tool.url, words, folder: folder, environment: environment)
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        return p
    }

    /// Runs the tool to its end (120 s at most), or stops it with SIGINT after `stopAfter` seconds.
    private func execute(_ words: [String], _ environment: [String: String], stopAfter: Double?) throws -> Tool.Result {
        let p = Tool.process(Tool.url, words, folder: folder, environment: environment)
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let pid = p.processIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + 120) { [p] in if p.isRunning { kill(pid, SIGKILL) } }
        // Standard output as it comes (the stop below looks at it).
        let output = PipeDrain(out.fileHandleForReading)
        // Whether an endless example was stopped at 40 s without having shown a code: a failure of the example.
        let showedNothing = Locked(false)
        if let stopAfter {
            // The user's Ctrl-C once the run has shown a code (on standard output or in an events file it writes)
            // and has run `stopAfter` seconds; 40 s at most.
            let started = Date()
            let folder = self.folder
            Thread.detachNewThread {
                // Stops the run once it has shown a code and run `stopAfter`, or at 40 s; ends with the run.
                pollUntil(3600, every: 0.2) {
                    guard p.isRunning else { return true }
                    let elapsed = Date().timeIntervalSince(started)
                    let shown = { () -> Bool in
                        if output.text.contains(#""event":"appeared""#) { return true }
                        let names = (try? FileManager.default.subpathsOfDirectory(atPath: folder.path)) ?? []
                        return names.filter { $0.hasSuffix(".jsonl") }.contains { name in
                            let path = folder.appendingPathComponent(name).path
                            let modified =
                                (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
                            return (modified ?? .distantPast) >= started
                                && ((try? String(contentsOfFile: path, encoding: .utf8))?.contains(
                                    #""event":"appeared""#) ?? false)
                        }
                    }
                    if elapsed >= stopAfter && shown() {
                        kill(pid, SIGINT)
                        return true
                    }
                    if elapsed >= 40 {
                        showedNothing.withLock { $0 = true }
                        kill(pid, SIGINT)
                        return true
                    }
                    return false
                }
            }
        }
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        pollUntil(10) { output.hasEnded }
        if showedNothing.withLock({ $0 }) {
            Issue.record("barscope \(words.joined(separator: " ")): no code shown in 40 s, stopped")
        }
        let o = output.data
        return Tool.Result(
            status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
            stderr: String(decoding: e, as: UTF8.self), output: o)
    }

    /// `echo "TEXT" > FIFO`: the line written to the command reading it.
    func echo(_ command: DocumentedExamplesTests.Command, _ source: String) throws {
        guard let m = command.text.firstMatch(of: /^echo\s+(.+?)\s*>\s*(\S+)$/) else { return unknown(command, source) }
        let text = DocumentedExamplesTests.words(String(m.1)).joined(separator: " ")
        let path = reroot(String(m.2))
        guard reader != nil else {
            Issue.record("\(command.text)  [\(source)]: nothing reads \(path)")
            return
        }
        // The FIFO opens for writing once its reader has it open (the background run, once started): opened
        // without blocking until then, while the reader runs.
        var fd: Int32 = -1
        pollUntil(30) {
            fd = open(path, O_WRONLY | O_NONBLOCK)
            return fd >= 0 || reader?.process.isRunning != true
        }
        guard fd >= 0 else {
            Issue.record("\(command.text)  [\(source)]: nothing opened \(path) (the reader ended or hung)")
            return
        }
        let bytes = Array((text + "\n").utf8)
        #expect(write(fd, bytes, bytes.count) == bytes.count, "\(command.text)  [\(source)]")
        close(fd)
        ran.append(source)
    }
}
