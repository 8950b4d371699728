import Barscope
import Foundation
import TestSupport
import Testing

/// What a command gave: the files it wrote, each what its name says, and output that fits the command.
extension Sandbox {
    /// Every file under the folder, with its size.
    func files() -> [String: Int] {
        var out: [String: Int] = [:]
        let walker = FileManager.default.enumerator(atPath: folder.path)
        while let name = walker?.nextObject() as? String {
            let path = folder.appendingPathComponent(name).path
            if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int,
                !isFIFO(path)
            {
                var isFolder: ObjCBool = false
                if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue {
                    out[path] = size
                }
            }
        }
        return out
    }

    /// The result fits the command: events are JSON Lines ending in `eos`, a scan prints codes, every file it wrote
    /// is what its name says, every output it names exists.
    func check(
        _ sub: String, _ words: [String], _ stdout: String, since before: [String: Int], line: String,
        source: String
    ) {
        let lines = stdout.split(separator: "\n").map(String.init)
        let at = "\(line)  [\(source)]"
        switch sub {
        case "run":
            let eventsToFile = words.firstIndex(of: "--events").map { words[$0 + 1] != "-" } ?? false
            for l in lines {
                let object = (try? JSONSerialization.jsonObject(with: Data(l.utf8))) as? [String: Any]
                #expect(object?["event"] != nil, "\(at): not an event: \(l.prefix(200))")
            }
            // Each run of the source ends with `eos` (a camera's stream stopped while it waits to reconnect ends
            // with the `reconnecting` that followed its last run's `eos`).
            if !eventsToFile && !lines.isEmpty {
                let last = lines.last ?? ""
                let ended =
                    last.contains(#""event":"eos""#)
                    || (last.contains(#""event":"reconnecting""#) && lines.contains { $0.contains(#""event":"eos""#) })
                #expect(ended, "\(at): the events end with \(last)")
            }
        case "scan":
            #expect(!lines.isEmpty, "\(at): printed no code")
            for l in lines {
                let fits =
                    l.hasPrefix("{")
                    ? ((try? JSONSerialization.jsonObject(with: Data(l.utf8))) as? [String: Any])?["data"] != nil
                    : l.range(of: #"^[A-Z0-9-]+:."#, options: .regularExpression) != nil
                #expect(fits, "\(at): \(l)")
            }
        default:
            break
        }
        let now = files()
        let written = now.filter { before[$0.key] != $0.value }
        for (path, size) in written {
            checkFile(path, size: size, at: at)
        }
        // Every output the line names was written.
        for option in ["--record", "--events", "--truth"] {
            guard let i = words.firstIndex(of: option), i + 1 < words.count, words[i + 1] != "-" else { continue }
            let named = words[i + 1]
            let stem = (named as NSString).deletingPathExtension
            let found = written.keys.contains { $0.hasSuffix("/" + named) || $0.contains("/" + stem + "-") }
            #expect(found, "\(at): \(option) \(named) was not written")
        }
        if sub == "generate", let out = words.dropFirst().first {
            #expect(written.keys.contains { $0.hasSuffix("/" + out) }, "\(at): \(out) was not written")
        }
        if let i = words.firstIndex(of: "--snapshots"), i + 1 < words.count {
            #expect(written.keys.contains { $0.hasSuffix(".png") }, "\(at): no snapshot in \(words[i + 1])")
        }
    }

    /// A file is what its name says: a video plays (GStreamer's discoverer finds its length), JSON Lines parse, an
    /// image has its format's signature.
    func checkFile(_ path: String, size: Int, at: String) {
        let name = (path as NSString).lastPathComponent
        #expect(size > 0, "\(at): \(name) is empty")
        let kind = (path as NSString).pathExtension.lowercased()
        switch kind {
        case "mp4", "mkv", "webm":
            let found = (try? Tool.shellOutput(["gst-discoverer-1.0", path])) ?? ""
            let duration = found.firstMatch(of: /Duration: (\d+):(\d+):([\d.]+)/).map {
                Double($0.1)! * 3600 + Double($0.2)! * 60 + Double($0.3)!
            }
            #expect((duration ?? 0) > 0, "\(at): \(name) does not play: \(found.suffix(300))")
        case "jsonl":
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            for l in text.split(separator: "\n") {
                #expect(
                    (try? JSONSerialization.jsonObject(with: Data(l.utf8))) is [String: Any],
                    "\(at): \(name): not JSON: \(l.prefix(200))")
            }
        case "png", "jpg", "jpeg":
            let head = [UInt8]((FileManager.default.contents(atPath: path) ?? Data()).prefix(4))
            let signature: [UInt8] = kind == "png" ? [0x89, 0x50, 0x4E, 0x47] : [0xFF, 0xD8, 0xFF]
            #expect(Array(head.prefix(signature.count)) == signature, "\(at): \(name) is not a \(kind) image")
        default:
            break
        }
    }
}
