import Barscope
import TestSupport
import Testing

@Suite(.suiteLimit) struct EventTests {
    @Test func detectionEncodesTheDesignSchema() {
        let d = Detection(
            type: "QR-Code", data: "hello", quality: 1,
            polygon: [Point(612, 300), Point(612, 520), Point(832, 520), Point(832, 300)])
        let line = Event.detection(frame: 41, ptsNs: 1_366_666_666, detection: d, track: 3).jsonLine
        let expected: String =
            #"{"event":"detection","frame":41,"pts_ns":1366666666,"type":"QR-Code","data":"hello","#
            + #""quality":1,"polygon":[[612,300],[612,520],[832,520],[832,300]],"bounds":{"x":612,"y":300,"#
            + #""width":220,"height":220},"in_viewfinder":true,"track":3}"#
        #expect(line == expected)
    }

    @Test func stringsAreEscaped() {
        let d = Detection(type: "CODE-128", data: "a\"b\\c\n\u{1}", quality: 5, polygon: [Point(0, 0)])
        let line = Event.appeared(frame: 0, ptsNs: nil, detection: d, track: 1).jsonLine
        #expect(line.contains(#""data":"a\"b\\c\n\u0001""#))
        #expect(line.contains(#""pts_ns":null"#))
    }

    @Test func lostAndEos() {
        #expect(
            Event.lost(frame: 86, ptsNs: 2_866_666_666, track: 3, type: "QR-Code", data: "x", framesSeen: 45).jsonLine
                == #"{"event":"lost","track":3,"frame":86,"pts_ns":2866666666,"type":"QR-Code","data":"x","frames_seen":45}"#
        )
        #expect(Event.eos(frames: 300, codes: 5).jsonLine == #"{"event":"eos","frames":300,"codes":5}"#)
        #expect(Event.state("playing").jsonLine == #"{"event":"state","state":"playing"}"#)
    }

    @Test func credentialsAreRedacted() {
        #expect(Redact.uri("rtsp://admin:s3cret@10.0.0.5:554/stream") == "rtsp://admin:***@10.0.0.5:554/stream")
        #expect(Redact.uri("rtsp://10.0.0.5/stream") == "rtsp://10.0.0.5/stream")
        #expect(Redact.uri("rtsp://user@host/a@b") == "rtsp://user:***@host/a@b")
        // A password with an unescaped "/" still never shows.
        #expect(!Redact.uri("rtsp://admin:p/ss@cam/x").contains("p/ss"))
        #expect(Redact.uri("rtsp://host/path@b") == "rtsp://host/path@b")
    }
}
