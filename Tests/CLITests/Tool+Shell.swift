import Barscope
import Foundation
import TestSupport
import Testing

extension Tool {
    /// A process for `executable` with `args`, in `folder` and `environment` (this process's when nil), not started.
    static func process(
        _ executable: URL, _ args: [String], folder: URL? = nil, environment: [String: String]? = nil
    ) -> Process {
        let p = Process()
        p.executableURL = executable
        p.arguments = args
        if let folder { p.currentDirectoryURL = folder }
        if let environment { p.environment = environment }
        return p
    }

    /// Runs a program of the system (curl, gst-discoverer-1.0) in `folder`, found on the PATH, in `environment`
    /// (this process's when nil); stopped after `timeout` seconds.
    static func shellResult(
        _ args: [String], folder: URL? = nil, environment: [String: String]? = nil, timeout: Double = 60
    ) throws -> Result {
        let p = process(URL(fileURLWithPath: "/usr/bin/env"), args, folder: folder, environment: environment)
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let pid = p.processIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [p] in if p.isRunning { kill(pid, SIGKILL) } }
        nonisolated(unsafe) var o = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            o = out.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let e = err.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        p.waitUntilExit()
        return Result(
            status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
            stderr: String(decoding: e, as: UTF8.self), output: o)
    }

    static func shellOutput(_ args: [String]) throws -> String { try shellResult(args).stdout }
}
