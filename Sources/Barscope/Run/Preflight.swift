import CBarscope
import CGStreamer
import Foundation

/// What is checked before a graph is built, so that a mistake stops with one line naming it rather than as an
/// element's error from inside the running pipeline.
enum Preflight {
    /// Elements, the recording's folder, the snapshots' folder, the demo's viewfinder, and the camera's mode (a
    /// request it cannot meet stops here, naming what it can do).
    /// - Returns: the camera's chosen mode, for a camera.
    static func check(_ c: RunConfiguration) throws -> CameraChoice? {
        var camera: CameraChoice? = nil
        if case .device(let path) = c.input {
            try GStreamer.require(["v4l2src"])
            camera = try CameraChoice.choose(from: CameraProbe.modes(device: path), request: c.camera, device: path)
        }
        try GStreamer.require(GraphPlan.scanGraph(c, camera: camera).factories)
        if let r = c.recording { try checkWritable(r.path) }
        if let folder = c.snapshotFolder {
            // Made when missing (as `mkdir -p` would): a fresh machine has no /var/lib/barscope/dock1 yet.
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDir), isDir.boolValue,
                FileManager.default.isWritableFile(atPath: folder)
            else { throw BarscopeError.badInput("\(folder): cannot write snapshots (not a writable folder)") }
        }
        if case .demo(let o) = c.input, c.viewfinder.enabled, c.viewfinder.region(in: o.size) == nil {
            throw BarscopeError.noRegion(o.size, c.viewfinder)
        }
        return camera
    }

    static func checkWritable(_ path: String) throws {
        let dir = (path as NSString).deletingLastPathComponent
        let folder = dir.isEmpty ? "." : dir
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDir), isDir.boolValue else {
            throw BarscopeError.badInput("\(path): cannot record (no such folder '\(folder)')")
        }
        var existing: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &existing), existing.boolValue {
            throw BarscopeError.badInput("\(path): cannot record (it is a folder)")
        }
        guard FileManager.default.isWritableFile(atPath: folder) else {
            throw BarscopeError.badInput("\(path): cannot record (folder '\(folder)' is not writable)")
        }
    }

    /// `[properties] element.property = value`: each value set on the named element as GStreamer parses it from a
    /// string (numbers, enums, caps...), never pasted into a launch description.
    static func setProperties(_ properties: [ElementProperty], in pipeline: Pipeline) throws {
        for p in properties {
            let at = "\(p.origin): [properties] \(p.element).\(p.property)"
            guard let element = pipeline.child(p.element) else {
                throw BarscopeError.badValue("\(at): no element named '\(p.element)' in the graph")
            }
            guard bs_has_property(element, p.property) != 0 else {
                throw BarscopeError.badValue("\(at): element '\(p.element)' has no property '\(p.property)'")
            }
            gst_util_set_object_arg(bs_gobject(element), p.property, p.value)
        }
    }

}

extension RunConfiguration {
    /// Builds the graph this configuration describes without running it: a pipeline file's fragments parse, their
    /// elements exist (or the Debian package to install is named), and its properties name real elements and
    /// properties (`barscope validate`).
    public func checkGraph() throws {
        let pipeline = try Pipeline(launch: GraphPlan.scanGraph(self).description)
        try Preflight.setProperties(properties, in: pipeline)
    }
}
