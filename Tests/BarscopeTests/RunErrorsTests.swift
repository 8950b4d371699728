import CGStreamer
import TestSupport
import Testing

@testable import Barscope

/// Bus errors to the one line a user reads: by the element's part of the graph, never by its name or path.
@Suite(.suiteLimit)
struct RunErrorsTests {
    func config(_ input: String) throws -> RunConfiguration {
        var c = RunConfiguration()
        c.input = try InputSource.parse(input)
        return c
    }
    let resource = "gst-resource-error-quark"

    @Test func aMissingFileIsBadInput() throws {
        var c = RunConfiguration()
        c.input = .uri("file:///no/such/clip.mp4", display: "/no/such/clip.mp4")
        let e = GStreamerError(
            domain: resource, code: Int32(GST_RESOURCE_ERROR_NOT_FOUND.rawValue), message: "File not found",
            source: "/GstPipeline:pipeline0/GstURIDecodeBin:notsrc")
        // The path names something else entirely: the role decides.
        let mapped = RunErrors.map(e, role: .source, configuration: c)
        #expect(mapped == .badInput("/no/such/clip.mp4: not found (File not found)"))
        #expect(mapped.exitCode == 2)
        #expect(RunErrors.map(e, role: .other, configuration: c) == .pipeline(e))
    }

    @Test func aFullDiskIsARecordingFailure() throws {
        var c = try config("demo")
        c.recording = try Recording(path: "/mnt/full/out.mp4")
        let e = GStreamerError(
            domain: resource, code: Int32(GST_RESOURCE_ERROR_NO_SPACE_LEFT.rawValue), message: "No space",
            source: "/GstPipeline:pipeline0/GstFileSink:filesink7")
        let mapped = RunErrors.map(e, role: .recording, configuration: c)
        #expect(mapped == .recording(path: "/mnt/full/out.mp4", reason: "no space left on the device"))
        #expect(mapped.description == "/mnt/full/out.mp4: cannot record: no space left on the device")
        #expect(mapped.exitCode == 3)
    }

    @Test func anUnreachableRTSPServerSaysWhy() throws {
        let c = try config("rtsp://user:secret@cam.local:8554/s")
        let e = GStreamerError(
            domain: resource, code: Int32(GST_RESOURCE_ERROR_OPEN_READ_WRITE.rawValue),
            message: "Could not open resource")
        let mapped = RunErrors.map(e, role: .source, configuration: c) { uri in
            #expect(uri.contains("secret"), "the probe gets the real URI")
            return "nothing listens on cam.local:8554 (connection refused)"
        }
        #expect(
            mapped
                == .sourceUnreachable(
                    input: "rtsp://user:***@cam.local:8554/s",
                    reason: "nothing listens on cam.local:8554 (connection refused)"))
        #expect(!mapped.description.contains("secret"))
        #expect(!mapped.isUsersMistake, "a camera that is away may come back: the policy may retry it")
    }

    @Test func aWrongPasswordIsTheUsersMistake() throws {
        let c = try config("rtsp://user:wrong@127.0.0.1:8554/s")
        let e = GStreamerError(
            domain: resource, code: Int32(GST_RESOURCE_ERROR_NOT_AUTHORIZED.rawValue), message: "Unauthorized")
        let mapped = RunErrors.map(e, role: .source, configuration: c) { _ in nil }
        guard case .notAuthorized = mapped else {
            Issue.record("\(mapped)")
            return
        }
        #expect(mapped.isUsersMistake)
        #expect(!mapped.description.contains("wrong@"))
    }
}
