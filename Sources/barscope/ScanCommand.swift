import Barscope
import Foundation

/// `barscope scan IMAGE...`: zbarimg's job, through the same decoding stage as video.
enum ScanCommand {
    static func main(_ tokens: [String]) throws -> Int32 {
        var json = false
        var settings = ScannerSettings()
        var args = Arguments(command: "scan", tokens)
        var help = false
        var engine = Engine.both
        try args.parse { option, next in
            switch option {
            case "--json": json = true
            case "-S": try settings.add(try next())
            case "--engine": engine = try Engine.parse(try next())
            case "--help", "-h": help = true
            default: return false
            }
            return true
        }
        if help {
            print(Help.scan)
            return 0
        }
        guard !args.positionals.isEmpty else {
            throw UsageError("scan needs at least one image (see 'barscope scan --help')")
        }
        let scanner = ImageScanner(settings: settings, engine: engine)
        var found = 0
        // Parts of structured appends, from every image: a message whose parts are all here is printed once more,
        // joined, after the last image's codes.
        var parts: [(path: String, detection: Detection)] = []
        for path in args.positionals {
            for d in try scanner.scan(path: path) {
                found += 1
                if d.sequence != nil { parts.append((path, d)) }
                if json {
                    var fields = Event.detection(frame: 0, ptsNs: nil, detection: d, track: nil).json
                    if case .object(let f) = fields {
                        fields = .object(
                            [("file", .string(path))] + f.filter { !["event", "frame", "pts_ns"].contains($0.0) }
                                + [("engine", .string(d.engine))])
                    }
                    print(fields.encoded())
                } else {
                    print("\(d.type):\(d.data)")
                }
            }
        }
        for joined in StructuredAppend.join(parts.map(\.detection)) {
            if json {
                // The files its parts came from, in order; no polygon (the parts may lie in different images).
                let files = parts.filter { p in
                    p.detection.type == joined.type && p.detection.sequence?.count == joined.sequence?.count
                        && p.detection.sequence?.id == joined.sequence?.id
                }.map(\.path).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
                var fields: [(String, JSONValue)] = []
                if case .object(let f) = Event.detection(frame: 0, ptsNs: nil, detection: joined, track: nil).json {
                    let placeless = ["event", "frame", "pts_ns", "quality", "polygon", "bounds", "in_viewfinder"]
                    fields =
                        [("files", .array(files.map { .string($0) }))] + f.filter { !placeless.contains($0.0) }
                        + [("engine", .string(joined.engine))]
                }
                print(JSONValue.object(fields).encoded())
            } else {
                print("\(joined.type):\(joined.data)")
            }
        }
        if found == 0 {
            FileHandle.standardError.write(
                Data("barscope: no code found in \(args.positionals.joined(separator: ", "))\n".utf8))
            return 4
        }
        return 0
    }
}
