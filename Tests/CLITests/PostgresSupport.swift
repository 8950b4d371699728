import Foundation
import TestSupport
import Testing

/// A real PostgreSQL server (Debian's postgresql 15) for one test: a cluster made by initdb in a folder of the
/// test's, listening on a free loopback port (and a socket in that folder), run as an unprivileged user (`nobody`
/// when the tests run as root: PostgreSQL refuses root), stopped at the end.
final class Postgres {
    let folder: String
    let port: Int
    private var server: Process?
    private let log: String
    static let bin = "/usr/lib/postgresql/15/bin"

    /// `postgresql://barscope@127.0.0.1:PORT/postgres`
    var url: String { "postgresql://barscope@127.0.0.1:\(port)/postgres" }

    /// nil, with the reason, when this machine has no PostgreSQL (scripts/setup installs it).
    static var missing: String? {
        FileManager.default.isExecutableFile(atPath: bin + "/postgres")
            ? nil : "PostgreSQL 15 is not installed (scripts/setup installs the postgresql package)"
    }

    init() throws {
        folder = Tool.folder.appendingPathComponent("pg-\(UUID().uuidString.prefix(8))").path
        port = Broker.freePort()
        log = folder + ".log"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        if getuid() == 0 {
            _ = try Tool.shell("chown nobody:nogroup '\(folder)' && touch '\(log)' && chown nobody '\(log)'")
        }
        let made = try Self.runAs(["\(Self.bin)/initdb", "-D", folder, "-U", "barscope", "--auth=trust", "-E", "UTF8"])
        guard made.status == 0 else { throw PostgresError("initdb failed: \(made.output.suffix(400))") }
        try start()
    }

    /// A PostgreSQL program as the unprivileged user (through runuser when the tests run as root).
    static func process(_ args: [String]) -> Process {
        let p = Process()
        if getuid() == 0 {
            p.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
            p.arguments = ["-u", "nobody", "--"] + args
        } else {
            p.executableURL = URL(fileURLWithPath: args[0])
            p.arguments = Array(args.dropFirst())
        }
        return p
    }

    /// Runs a PostgreSQL program as the unprivileged user; its exit status and output.
    static func runAs(_ args: [String]) throws -> (status: Int32, output: String) {
        let p = process(args)
        p.currentDirectoryURL = URL(fileURLWithPath: "/tmp")
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Starts the server and waits until it accepts connections (pg_isready), 30 s at most.
    func start() throws {
        let p = Self.process([
            "\(Self.bin)/postgres", "-D", folder, "-p", String(port), "-k", folder, "-c", "listen_addresses=127.0.0.1",
            "-c", "fsync=off",
        ])
        p.standardOutput = FileHandle(forWritingAtPath: log)
        p.standardError = FileHandle(forWritingAtPath: log)
        try p.run()
        server = p
        var ready = false
        try pollUntil(30, every: 0.1) {
            ready =
                try Self.runAs([
                    "\(Self.bin)/pg_isready", "-h", "127.0.0.1", "-p", String(port), "-U", "barscope", "-d", "postgres",
                    "-q",
                ]).status == 0
            return ready || !p.isRunning
        }
        if ready { return }
        throw PostgresError("postgres did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
    }

    /// A fast shutdown (SIGINT to the server itself: its pid is the first line of postmaster.pid; runuser, between
    /// us and it, does not pass SIGINT on), waited for (30 s, then SIGKILL).
    func stop() {
        guard let p = server, p.isRunning else { return }
        let pidFile = (try? String(contentsOfFile: folder + "/postmaster.pid", encoding: .utf8)) ?? ""
        if let pid = pidFile.split(separator: "\n").first.flatMap({ Int32($0) }) {
            kill(pid, SIGINT)
        } else {
            kill(p.processIdentifier, SIGINT)
        }
        pollUntil(30) { !p.isRunning }
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        server = nil
    }

    /// A SQL statement through psql; its output (unaligned, tuples only).
    func psql(_ sql: String) throws -> String {
        let r = try Self.runAs([
            "/usr/lib/postgresql/15/bin/psql", "-h", "127.0.0.1", "-p", String(port), "-U", "barscope", "-d",
            "postgres",
            "-At", "-c", sql,
        ])
        return r.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: folder)
    }
}

struct PostgresError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
