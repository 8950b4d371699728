import Barscope
import CBarscope
import Foundation

/// `barscope serve`: a long-running service that runs many named pipelines at once, controlled over HTTP
/// (libsoup 3 on GLib's main loop). See `ServiceRoutes` for the API.
enum ServeCommand {
    static func main(_ tokens: [String]) throws -> Int32 {
        var listen = "127.0.0.1:8080"
        var tokenFile: String? = nil
        var stateFolder: String? = nil
        var pipelines: String? = nil
        var publish = PublishSettings()
        var index: String? = nil
        var keepDays: Double? = nil
        var help = false
        var args = Arguments(command: "serve", tokens)
        try args.parse { option, next in
            switch option {
            case "--listen": listen = try next()
            case "--token-file": tokenFile = try next()
            case "--state": stateFolder = try next()
            case "--pipelines": pipelines = try next()
            case "--publish": publish.targets.append(try PublishTarget.parse(try next()))
            case "--node":
                let node = try next()
                guard ScanService.isValidName(node) else {
                    throw UsageError("--node '\(node)': letters, digits, '.', '_', '-'")
                }
                publish.node = node
            case "--spool": publish.spool = try next()
            case "--index": index = try next()
            case "--keep-days": keepDays = try RetentionSweeps.days(try next())
            case "--spool-max":
                let text = try next()
                guard let bytes = PipelineSpec.byteSize(text), bytes >= 1 << 20 else {
                    throw UsageError("--spool-max '\(text)': expected a size of at least 1MB (256MB, 2GB)")
                }
                publish.spoolMaxBytes = bytes
            case "--help", "-h": help = true
            default: return false
            }
            return true
        }
        if help {
            print(Help.serve)
            return 0
        }
        if let extra = args.positionals.first { throw UsageError("serve takes no positional argument, got '\(extra)'") }
        let (host, port) = try parseListen(listen)
        let token = try tokenFile.map(readToken)
        if token == nil && !isLoopback(host) {
            throw UsageError("--listen \(listen): not loopback; give --token-file FILE so that requests need a token")
        }
        let state = try stateFolder ?? defaultStateFolder()
        if let pipelines {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: pipelines, isDirectory: &isDir), isDir.boolValue else {
                throw BarscopeError.badInput("\(pipelines): no such folder of pipelines")
            }
            let rest = ProcessInfo.processInfo.environment["BARSCOPE_PIPELINES"].map { ":" + $0 } ?? ""
            setenv("BARSCOPE_PIPELINES", pipelines + rest, 1)
        }
        raiseDescriptorLimit()
        StopSignals.install()
        GStreamer.initialize()
        let service = try ScanService(stateFolder: state)
        if !publish.targets.isEmpty {
            let publisher = try Publisher(publish, stateFolder: state)
            service.publisher.withLock { $0 = publisher }
        }
        // The sightings index: checked now (a bad file or an unreachable database stops here, exit 2).
        let location = index ?? (state as NSString).appendingPathComponent("sightings.sqlite")
        try SightingIndexes.open(location).close()
        service.index.withLock { $0 = (location, publish.node ?? ProcessInfo.processInfo.hostName) }
        let routes = ServiceRoutes(service: service)
        let server = try HTTPServer(host: host, port: port, token: token, publicPaths: Console.publicPaths) {
            routes.handle($0, $1)
        }
        let shown = host.contains(":") ? "[\(host)]" : host
        FileHandle.standardError.write(
            Data(
                "barscope: serving http://\(shown):\(server.port)/ (state in \(state); the console is that page)\n".utf8
            ))
        // Broker news once the first line (where the service is) has been said.
        if let publisher = service.publisher.load() {
            publisher.onEvent { event in
                // Broker news for the service's own log (each instance's events carry their own).
                switch event {
                case .warning(let m, _): FileHandle.standardError.write(Data("barscope: warning: \(m)\n".utf8))
                case .broker(let up, let sink, let reason):
                    let line = up ? "\(sink): connected" : "\(sink): disconnected (\(reason ?? ""))"
                    FileHandle.standardError.write(Data("barscope: \(line)\n".utf8))
                default: break
                }
            }
        }
        for problem in service.restore() { FileHandle.standardError.write(Data("barscope: \(problem)\n".utf8)) }
        if let keepDays { RetentionSweeps.serve(service, days: keepDays) }
        // SIGTERM (systemd's stop), SIGINT, SIGHUP: every instance stops with its recording finished, then exit 0;
        // a second signal exits at once.
        StopSignals.watch(
            first: {
                FileHandle.standardError.write(
                    Data("barscope: stopping every instance (signal again to stop now)\n".utf8))
                Thread.detachNewThread {
                    service.stopAll()
                    service.publisher.load()?.stop()
                    MainLoop.quit()
                }
            }, next: { exit(128 + bs_last_signal()) })
        MainLoop.runUntilQuit()
        withExtendedLifetime(server) {}
        FileHandle.standardError.write(Data("barscope: stopped\n".utf8))
        return 0
    }

    static func parseListen(_ text: String) throws -> (String, Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port)
        else { throw UsageError("--listen '\(text)': expected HOST:PORT (127.0.0.1:8080)") }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host.isEmpty ? "127.0.0.1" : host, port)
    }

    static func isLoopback(_ host: String) -> Bool { host == "localhost" || host == "::1" || host.hasPrefix("127.") }

    static func readToken(_ path: String) throws -> String {
        guard let data = FileContents.read(atPath: path) else {
            throw BarscopeError.badInput("\(path): cannot read the token file")
        }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard token.count >= 16, !token.contains(where: { $0.isWhitespace }) else {
            throw BarscopeError.badInput("\(path): the token must be one word of at least 16 characters")
        }
        return token
    }

    /// The index `search` reads when given none: $BARSCOPE_INDEX, else the state folder's (where `serve` keeps it).
    static func defaultIndex() throws -> String {
        if let i = ProcessInfo.processInfo.environment["BARSCOPE_INDEX"], !i.isEmpty { return i }
        return (try defaultStateFolder() as NSString).appendingPathComponent("sightings.sqlite")
    }

    /// --state, else systemd's $STATE_DIRECTORY, else $XDG_STATE_HOME/barscope, else ~/.local/state/barscope.
    static func defaultStateFolder() throws -> String {
        let env = ProcessInfo.processInfo.environment
        if let d = env["STATE_DIRECTORY"], !d.isEmpty { return d.split(separator: ":").first.map(String.init) ?? d }
        if let x = env["XDG_STATE_HOME"], !x.isEmpty { return x + "/barscope" }
        if let h = env["HOME"], !h.isEmpty { return h + "/.local/state/barscope" }
        throw UsageError("no HOME, XDG_STATE_HOME or STATE_DIRECTORY: give --state DIR")
    }

    /// A thousand idle connections need a thousand descriptors: the soft limit goes up to the hard one.
    static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = min(limit.rlim_max, 65536)
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}
