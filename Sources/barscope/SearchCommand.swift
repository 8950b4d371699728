import Barscope
import Foundation

/// `barscope search [TEXT]`: where and when a code was seen, from the sightings index (newest first).
enum SearchCommand {
    static func main(_ tokens: [String]) throws -> Int32 {
        var query = SightingQuery()
        var index: String? = nil
        var format = "text"
        var help = false
        var cycles = false
        var cycleQuery = CycleQuery()
        var args = Arguments(command: "search", tokens)
        func time(_ option: String, _ text: String) throws -> Date {
            do { return try TimeArgument.parse(text) } catch let e as BarscopeError {
                throw UsageError("\(option): \(e.description)")
            }
        }
        try args.parse { option, next in
            switch option {
            case "--prefix": query.prefix = true
            case "--from": query.from = try time(option, try next())
            case "--to": query.to = try time(option, try next())
            case "--camera": query.camera = try next()
            case "--limit": query.limit = try parseInt(try next(), option: option, min: 1)
            case "--index": index = try next()
            case "--cycles": cycles = true
            case "--result":
                let r = try next()
                guard CycleResult.Outcome(rawValue: r) != nil else {
                    throw UsageError("--result '\(r)': one of good, noread, multiple, mismatch")
                }
                cycleQuery.result = r
            case "--label": cycleQuery.label = try next()
            case "--json": format = "json"
            case "--csv": format = "csv"
            case "--help", "-h": help = true
            default: return false
            }
            return true
        }
        if help {
            print(Help.search)
            return 0
        }
        guard args.positionals.count <= 1 else {
            throw UsageError(
                "search takes one code (or none: every sighting in the window), got \(args.positionals.count)")
        }
        if cycles { return try searchCycles(cycleQuery, query, args.positionals, index: index, format: format) }
        if cycleQuery.result != nil || cycleQuery.label != nil {
            throw UsageError("--result and --label need --cycles")
        }
        query.code = args.positionals.first
        if query.prefix && query.code == nil { throw UsageError("--prefix needs the start of a code") }
        if let from = query.from, let to = query.to, from > to { throw UsageError("--from is after --to") }
        let location = try index ?? ServeCommand.defaultIndex()
        if !SightingIndexes.isPostgres(location) && !FileManager.default.fileExists(atPath: location) {
            throw BarscopeError.badInput("\(location): no such index (give --index FILE|URL)")
        }
        let store = try SightingIndexes.open(location)
        defer { store.close() }
        // Pages of the index until the limit: the output is the same however the store pages.
        let wanted = query.limit
        var found: [Sighting] = []
        query.limit = min(wanted, 1000)
        while found.count < wanted {
            let page = try store.search(query)
            found += page.sightings.prefix(wanted - found.count)
            guard let next = page.next else { break }
            query.cursor = next
        }
        var out = ""
        switch format {
        case "json": for s in found { out += s.json.encoded() + "\n" }
        case "csv":
            out = Sighting.csvHeader + "\n"
            for s in found { out += s.csv + "\n" }
        default:
            for s in found {
                var line = "\(Sighting.utc(s.firstSeen))  \(s.symbology):\(s.code)  \(s.camera)  \(s.frames) frames"
                if let r = s.recording {
                    line += "  \(r) at \(String(format: "%.1f", s.offsetSeconds ?? 0)) s"
                }
                out += line + "\n"
            }
        }
        FileHandle.standardOutput.write(Data(out.utf8))
        return found.isEmpty ? 4 : 0
    }

    /// `search --cycles`: read cycles' results, newest first (exit 4 when none).
    static func searchCycles(
        _ q: CycleQuery, _ sightings: SightingQuery, _ positionals: [String], index: String?, format: String
    ) throws -> Int32 {
        guard positionals.isEmpty else { throw UsageError("--cycles takes no code (--result, --label narrow it)") }
        var q = q
        (q.from, q.to, q.camera, q.limit) = (sightings.from, sightings.to, sightings.camera, sightings.limit)
        let location = try index ?? ServeCommand.defaultIndex()
        if !SightingIndexes.isPostgres(location) && !FileManager.default.fileExists(atPath: location) {
            throw BarscopeError.badInput("\(location): no such index (give --index FILE|URL)")
        }
        let store = try SightingIndexes.open(location)
        defer { store.close() }
        let found = try store.searchCycles(q)
        var out = format == "csv" ? CycleRow.csvHeader + "\n" : ""
        for c in found {
            switch format {
            case "json": out += c.json.encoded() + "\n"
            case "csv": out += c.csv + "\n"
            default:
                var line = "\(Sighting.utc(c.opened))  \(c.result)  \(c.label ?? "-")  \(c.camera)  "
                line += c.codes.isEmpty ? "no code" : c.codes.map(\.code).joined(separator: " ")
                out += line + "\n"
            }
        }
        FileHandle.standardOutput.write(Data(out.utf8))
        return found.isEmpty ? 4 : 0
    }
}
