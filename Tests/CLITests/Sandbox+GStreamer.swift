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
        let r = try Tool.shellResult(
            ["/usr/bin/" + words[0]] + words.dropFirst(), folder: folder, environment: environment, timeout: 120)
        let (output, e) = (r.stdout, r.stderr)
        let at = "\(command.text)  [\(source)]"
        #expect(r.status == 0, "\(at): exit \(r.status): \(e.suffix(400))")
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
