import Barscope
import Foundation
import Synchronization
import TestSupport
import Testing

/// The built `barscope` binary, run as a user runs it: exit codes, one-line messages, clean standard output.
struct Tool {
    static let url: URL = {
        if let p = ProcessInfo.processInfo.environment["BARSCOPE_BIN"] { return URL(fileURLWithPath: p) }
        // swift test puts the test bundle next to the products it built.
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = dir.appendingPathComponent("barscope")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: ".build/debug/barscope")
    }()

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        /// Standard output's bytes as they came (binary payloads).
        var output = Data()
    }

    /// - Parameters:
    ///   - timeout: seconds the child may take; past them it is stopped (SIGTERM, then SIGKILL 5 s later) and the
    ///     calling test records an issue naming the command.
    ///   - prefix: a command to run the tool under (`/usr/bin/time -f %M -o FILE`).
    static func run(
        _ args: [String], timeout: Double = 120, prefix: [String] = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Result {
        let p = Process()
        p.executableURL = prefix.isEmpty ? url : URL(fileURLWithPath: prefix[0])
        p.arguments = prefix.isEmpty ? args : Array(prefix.dropFirst()) + [url.path] + args
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        // The child's time limit: a hung child fails its test instead of hanging the suite.
        let timedOut = Atomic<Bool>(false)
        let pid = p.processIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [p] in
            guard p.isRunning else { return }
            timedOut.store(true, ordering: .relaxed)
            kill(pid, SIGTERM)
            DispatchQueue.global().asyncAfter(deadline: .now() + 5) { if p.isRunning { kill(pid, SIGKILL) } }
        }
        // Read both pipes fully before waiting, so a chatty child never blocks on a full pipe.
        let group = DispatchGroup()
        nonisolated(unsafe) var o = Data()
        nonisolated(unsafe) var e = Data()
        group.enter()
        DispatchQueue.global().async {
            o = out.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        e = err.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        p.waitUntilExit()
        if timedOut.load(ordering: .relaxed) {
            Issue.record(
                "barscope \(args.joined(separator: " ")): still running after \(timeout) s, stopped",
                sourceLocation: sourceLocation)
        }
        return Result(
            status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
            stderr: String(decoding: e, as: UTF8.self), output: o)
    }

    /// Runs a shell command line of the test's own (mount, umount); returns its exit status.
    static func shell(_ line: String) throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", line]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        return p.terminationStatus
    }

    /// Starts the endless live demo recording to `path`, in the background, with a detection event for every
    /// code in every frame scanned (its frame number says how far the recording has got).
    static func startLiveRecording(to path: String) throws -> (Process, OutputLines) {
        let p = Process()
        p.executableURL = url
        p.arguments = [
            "run", "demo", "--live", "--every-frame", "--frames", "0", "--size", "640x360", "--record", path,
            "--quiet",
        ]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        return (p, OutputLines(out.fileHandleForReading))
    }

    /// The JSON objects of a run's JSON Lines output (other lines skipped).
    static func events(_ stdout: String) -> [[String: Any]] {
        stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// Plays a recording back through barscope itself and returns how many frames it holds (-1 if it does not play).
    static func framesIn(_ path: String) throws -> Int {
        let replay = try run(["run", path, "--viewfinder", "off", "--quiet"])
        guard replay.status == 0 else { return -1 }
        let eos = replay.stdout.split(separator: "\n").last.flatMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        return eos?["frames"] as? Int ?? -1
    }

    /// A demo clip made once by `barscope generate` in the test folder.
    static func clip(_ name: String, size: String, frames: Int) throws -> String {
        let path = folder.appendingPathComponent(name).path
        if !FileManager.default.fileExists(atPath: path) {
            let made = try run(["generate", path, "--size", size, "--frames", String(frames)])
            try #require(made.status == 0, "\(made.stderr)")
        }
        return path
    }

    static let folder: URL = {
        ScratchFolder.make("barscope-cli")
    }()
}
