import Foundation

/// The recordings a sighting or a read cycle was made in, served in byte ranges (a browser's video element seeks).
extension ServiceRoutes {
    /// `GET /v1/sightings/recording?run=R&track=T`: the recording file the index names for that sighting (no other
    /// file: the index is the list of what may be read), with byte ranges (`Range: bytes=A-B`, answered 206 in
    /// pieces of at most 4 MB) so that a browser's video element seeks to the moment.
    func recording(_ r: HTTPRequest, _ x: HTTPExchange) {
        guard let run = r.query["run"], !run.isEmpty, let track = r.query["track"].flatMap({ Int($0) }) else {
            x.error(400, "run and track: the sighting whose recording is wanted")
            return
        }
        let service = self.service
        serveRecording(named: "sighting \(run)/\(track)", r, x) {
            try service.sightings(SightingQuery(limit: 1, run: run, track: track)).sightings.first?.recording
        }
    }

    /// `GET /v1/cycles/recording?run=R&cycle=N`: the recording a read cycle was made in, as a sighting's.
    func cycleRecording(_ r: HTTPRequest, _ x: HTTPExchange) {
        guard let run = r.query["run"], !run.isEmpty, let number = r.query["cycle"].flatMap({ Int($0) }) else {
            x.error(400, "run and cycle: the read cycle whose recording is wanted")
            return
        }
        var q = CycleQuery()
        (q.run, q.cycle, q.limit) = (run, number, 1)
        let service = self.service
        serveRecording(named: "cycle \(run)/\(number)", r, x) { [q] in try service.cycles(q).first?.recording }
    }

    /// Answers with the bytes of the file `lookup` finds in the index, off the main loop.
    private func serveRecording(
        named name: String, _ r: HTTPRequest, _ x: HTTPExchange, lookup: @escaping @Sendable () throws -> String?
    ) {
        let range = r.headers["Range"]
        Self.offMainLoop(x, { Self.recordingAnswer(path: try lookup(), of: name, range: range) }) { $0.send(x) }
    }

    enum RecordingAnswer {
        case failure(Int, String)
        case bytes(Int, String, [UInt8], [(String, String)])

        func send(_ x: HTTPExchange) {
            switch self {
            case .failure(let status, let message): x.error(status, message)
            case .bytes(let status, let type, let body, let headers):
                x.respond(status, contentType: type, body: body, headers: headers)
            }
        }
    }

    static func recordingAnswer(path: String?, of name: String, range: String?) -> RecordingAnswer {
        guard let path, let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int,
            let file = FileHandle(forReadingAtPath: path)
        else { return .failure(404, "no recording of \(name) on this machine") }
        defer { try? file.close() }
        let type = path.hasSuffix(".mkv") ? "video/x-matroska" : "video/mp4"
        let piece = 4 << 20
        var first = 0
        var last = size - 1
        var partial = false
        if let range, let m = range.wholeMatch(of: /bytes=(\d*)-(\d*)/) {
            partial = true
            if m.1.isEmpty, let n = Int(m.2) {
                first = max(0, size - n)  // the last n bytes
            } else {
                first = Int(m.1) ?? 0
                if let l = Int(m.2) { last = min(l, size - 1) }
            }
            guard first < size, first <= last else {
                return .failure(416, "range \(range) is outside the recording's \(size) bytes")
            }
            last = min(last, first + piece - 1)
        } else if size > 256 << 20 {
            return .failure(413, "the recording is \(size) bytes: ask for it in ranges (Range: bytes=A-B)")
        }
        do {
            try file.seek(toOffset: UInt64(first))
            let bytes = [UInt8](try file.read(upToCount: last - first + 1) ?? Data())
            var headers = [("Accept-Ranges", "bytes")]
            if partial { headers.append(("Content-Range", "bytes \(first)-\(first + bytes.count - 1)/\(size)")) }
            return .bytes(partial ? 206 : 200, type, bytes, headers)
        } catch {
            return .failure(500, "\(path): \(error)")
        }
    }
}
