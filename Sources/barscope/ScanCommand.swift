import Barscope
import Foundation

/// `barscope scan IMAGE...`: zbarimg's job, through the same decoding stage as video.
enum ScanCommand {
    static func main(_ tokens: [String]) throws -> Int32 {
        var json = false
        var xml = false
        var raw = false
        var oneshot = false
        var quiet = false
        var settings = ScannerSettings()
        var args = Arguments(command: "scan", tokens)
        var help = false
        var engine = Engine.both
        try args.parse { option, next in
            switch option {
            case "--json": json = true
            // zbarimg's own options, with its meanings.
            case "--xml": xml = true
            case "--noxml": xml = false
            case "--raw": raw = true
            case "-1", "--oneshot": oneshot = true
            case "-q", "--quiet": quiet = true
            case "--nodbus", "-D", "--nodisplay": break
            case "-S", "--set": try settings.add(try next())
            case "--engine": engine = try Engine.parse(try next())
            case "--help", "-h": help = true
            default: return false
            }
            return true
        }
        if json && (xml || raw) { throw UsageError("--json: not with --xml or --raw") }
        if help {
            print(Help.scan)
            return 0
        }
        guard !args.positionals.isEmpty else {
            throw UsageError("scan needs at least one image (see 'barscope scan --help')")
        }
        let scanner = ImageScanner(settings: settings, engine: engine)
        // zbarimg's binary mode (-Sbinary): the payload's bytes as they are, with no newline after them.
        let binary = settings.binary
        let out = FileHandle.standardOutput
        var found = 0
        // Parts of structured appends, from every image: a message whose parts are all here is printed once more,
        // joined, after the last image's codes.
        var parts: [(path: String, detection: Detection)] = []
        if xml { out.write(Data(ZbarimgXML.head.utf8)) }
        for path in args.positionals {
            var detections = try scanner.scan(path: path)
            // --oneshot: zbarimg stops at an image's first code.
            if oneshot { detections = Array(detections.prefix(1)) }
            if xml { out.write(Data(ZbarimgXML.source(path, detections).utf8)) }
            for d in detections {
                found += 1
                if d.sequence != nil { parts.append((path, d)) }
                if xml { continue }
                if raw || !json {
                    var bytes = (raw ? [] : Array("\(d.type):".utf8)) + (d.binary ?? Array(d.data.utf8))
                    // zbarimg ends a code's line unless in binary mode, or --raw with --oneshot.
                    if !binary && !(raw && oneshot) { bytes.append(0x0A) }
                    out.write(Data(bytes))
                } else if json {
                    var fields = Event.detection(frame: 0, ptsNs: nil, detection: d, track: nil).json
                    if case .object(let f) = fields {
                        fields = .object(
                            [("file", .string(path))] + f.filter { !["event", "frame", "pts_ns"].contains($0.0) }
                                + [("engine", .string(d.engine))])
                    }
                    print(fields.encoded())
                }
            }
        }
        if xml { out.write(Data(ZbarimgXML.foot.utf8)) }
        for joined in StructuredAppend.join(parts.map(\.detection)) where !xml && !raw {
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
            if quiet { return 4 }
            FileHandle.standardError.write(
                Data("barscope: no code found in \(args.positionals.joined(separator: ", "))\n".utf8))
            return 4
        }
        return 0
    }
}

/// zbarimg's `--xml` layout: one `source` per image, its codes under `index num='0'`, each code's text in CDATA
/// (a binary payload as base64, as zbarimg gives it).
enum ZbarimgXML {
    static let head = "<barcodes xmlns='http://zbar.sourceforge.net/2008/barcode'>\n"
    static let foot = "</barcodes>\n"

    static func source(_ path: String, _ detections: [Detection]) -> String {
        var s = "<source href='\(escape(path))'>\n"
        if !detections.isEmpty {
            s += "<index num='0'>\n"
            for d in detections {
                s += "<symbol type='\(escape(d.type))' quality='\(d.quality)' orientation='\(d.orientationName)'>"
                if let bytes = d.binary {
                    s += "<data format='base64' length='\(bytes.count)'><![CDATA[\n"
                    s += Data(bytes).base64EncodedString(options: [.lineLength76Characters, .endLineWithLineFeed])
                    s += "\n]]></data>"
                } else {
                    // "]]>" cannot stand inside CDATA: split it across two sections.
                    s +=
                        "<data><![CDATA[" + d.data.replacingOccurrences(of: "]]>", with: "]]]]><![CDATA[>")
                        + "]]></data>"
                }
                s += "</symbol>\n"
            }
            s += "</index>\n"
        }
        return s + "</source>\n"
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "'", with: "&apos;")
            .replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
