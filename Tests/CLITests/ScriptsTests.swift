import Foundation
import TestSupport
import Testing

/// The scripts a newcomer runs first: scripts/barscope's build says one line the first time, nothing when up to
/// date, and its log only when it fails, never SwiftPM's pkg-config noise (issue 13, defect 8). The function is
/// run with the real `swift` on throwaway roots; a real build is scripts/barscope's own first run.
@Suite(.suiteLimit)
struct ScriptsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Runs `quiet_build ARGS` from scripts/env.sh with `root` set to `folder`; returns status, stdout, stderr.
    func quietBuild(in folder: String, _ args: String) throws -> (Int32, String, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = ["-c", "source '\(Self.root.path)/scripts/env.sh'; root='\(folder)'; quiet_build demo \(args)"]
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }

    func folder() throws -> String {
        let f = FileManager.default.temporaryDirectory.appendingPathComponent("quiet-build-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: f, withIntermediateDirectories: true)
        return f.path
    }

    @Test func aFirstBuildSaysOneLineAndNothingElse() throws {
        // `swift build --version` succeeds anywhere and prints its version: the function must swallow it.
        let f = try folder()
        let (status, out, err) = try quietBuild(in: f, "--version")
        #expect(status == 0)
        #expect(out.isEmpty, "standard output stays for barscope: \(out)")
        #expect(err == "building demo (first run, a few minutes)...\n", "\(err)")
        // Once built (the folder exists), nothing at all.
        try FileManager.default.createDirectory(atPath: f + "/.build/debug", withIntermediateDirectories: true)
        let (again, out2, err2) = try quietBuild(in: f, "--version")
        #expect(again == 0 && out2.isEmpty && err2.isEmpty, "\(out2)\(err2)")
    }

    @Test func aFailedBuildShowsItsLogAndSaysSo() throws {
        let f = try folder()
        try FileManager.default.createDirectory(atPath: f + "/.build/debug", withIntermediateDirectories: true)
        // No Package.swift there: SwiftPM's own error is the log.
        let (status, out, err) = try quietBuild(in: f, "--product nothing")
        #expect(status != 0)
        #expect(out.isEmpty)
        #expect(err.contains("error"), "the build's log: \(err)")
        #expect(err.hasSuffix("the build of demo failed (its log is above)\n"), "\(err)")
        #expect(!err.contains("prohibited flag"))
    }
}

/// The soak's judgement can fail (issue 41): `scripts/soak.py --judge` on a service soak's recorded samples passes
/// them as they are and fails them with a leak added, of memory (2.2 MB/min, the leak docs/decisions.md tells of; the
/// limit is 0.5, but the service's memory steps make 1.0 too close to call in 3 minutes), descriptors or threads
/// (3 a minute: one per short-lived instance); and it fails the samples of a real leak, recorded before its fix
/// (libsoup's connections in CLOSE-WAIT, one descriptor per request: Sources/Barscope/Service/HTTPExchange.swift).
@Suite(.suiteLimit)
struct SoakJudgementTests {
    static let fixtures = ScriptsTests.root.appendingPathComponent("Tests/Fixtures/soak")

    /// Runs `python3 scripts/soak.py --judge FILE ARGS`; returns status and what it printed (both streams).
    func judge(_ file: String, _ args: [String] = []) throws -> (Int32, String) {
        let r = try Tool.shellResult(
            [
                "python3", ScriptsTests.root.appendingPathComponent("scripts/soak.py").path, "--judge",
                Self.fixtures.appendingPathComponent(file).path,
            ] + args)
        return (r.status, r.stdout + r.stderr)
    }

    @Test func aCleanRunPasses() throws {
        let (status, out) = try judge("serve-clean.tsv")
        #expect(status == 0, "\(out)")
        #expect(out.hasSuffix("soak --judge: PASS\n"), "\(out)")
    }

    @Test(arguments: [
        (["2.2"], "memory grew"), (["--fds", "3"], "fds grew"), (["--threads", "3"], "threads grew"),
    ])
    func aLeakAddedFails(leak: [String], says: String) throws {
        let (status, out) = try judge("serve-clean.tsv", leak)
        #expect(status == 1, "\(leak): \(out)")
        #expect(out.contains("soak --judge: FAIL: ") && out.contains(says), "\(leak): \(out)")
        #expect(!out.contains("PASS"), "\(out)")
    }

    @Test func aRealLeakFails() throws {
        let (status, out) = try judge("serve-libsoup-close-wait.tsv")
        #expect(status == 1, "\(out)")
        #expect(out.contains("memory grew") && out.contains("fds grew"), "\(out)")
    }
}
