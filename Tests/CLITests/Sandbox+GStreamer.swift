import Barscope
import Foundation
import TestSupport
import Testing

/// `gst-launch-1.0` and `gst-inspect-1.0` lines: each exits 0, and the element's messages carry the clip's codes.
extension Sandbox {
    func gstreamer(_ words: [String], _ command: DocumentedExamplesTests.Command, _ source: String) throws {
        var environment = self.environment
        environment = Sanitizer.environment(environment)
        if words.contains("autovideosink") {
            if display == nil { display = try XServer() }
            environment["DISPLAY"] = display!.display
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/" + words[0])
        p.arguments = Array(words.dropFirst())
        p.currentDirectoryURL = folder
        p.environment = environment
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let pid = p.processIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + 120) { [p] in if p.isRunning { kill(pid, SIGKILL) } }
        nonisolated(unsafe) var o = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            o = out.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let e = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        group.wait()
        p.waitUntilExit()
        let output = String(decoding: o, as: UTF8.self)
        let at = "\(command.text)  [\(source)]"
        #expect(p.terminationStatus == 0, "\(at): exit \(p.terminationStatus): \(e.suffix(400))")
        #expect(!e.contains("CRITICAL"), "\(at): \(e.suffix(400))")
        if words[0] == "gst-inspect-1.0" {
            #expect(output.contains("barscope"), "\(at): \(output.prefix(300))")
        } else if words.contains("-m") {
            // The element's messages carry the codes of the clip.
            #expect(output.contains("barscope") && output.contains("symbol"), "\(at): \(output.suffix(400))")
        }
        ran.append(source)
    }
}
