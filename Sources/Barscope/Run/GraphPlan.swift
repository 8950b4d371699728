/// The scan graph as one model, from which both the launch description and the element factories it needs come:
///
/// source ─► tee ─┬─► queue ─► videocrop (viewfinder) ─► appsink ─► ZBar ─► tracker ─► events
///                └─► queue ─► cairooverlay (viewfinder, mask, codes, labels) ─► tee ─► MP4 | window | RTSP
///
/// Our own chains are read for their factories (the first word of each `!`-separated part that is neither caps nor
/// a pad reference), so the list of required elements cannot drift from the description. A pipeline file's own
/// fragments are not read: GStreamer checks their elements as it parses them, naming the missing one.
struct GraphPlan: Equatable, Sendable {
    private(set) var parts: [String] = []
    private(set) var factories: [String] = []

    var description: String { parts.joined(separator: " ") }

    /// A chain of our own: `t. ! queue name=scanq ! videocrop name=crop ! appsink name=scan`.
    mutating func add(_ chain: String) {
        parts.append(chain)
        for part in chain.split(separator: "!") {
            guard let first = part.split(separator: " ").first.map(String.init) else { continue }
            // Caps (`video/x-raw,...`) and pad references (`t.`, `out.`) are not elements.
            if first.contains("/") || first.hasSuffix(".") { continue }
            need(first)
        }
    }

    /// A fragment the user's pipeline file wrote (not read for factories).
    mutating func addFragment(_ launch: String) { parts.append(launch) }

    /// A factory made by code rather than named in the description (splitmuxsink's muxer and sink, the RTSP
    /// server's media).
    mutating func need(_ factory: String) {
        if !factories.contains(factory) { factories.append(factory) }
    }

    /// The plan of a configuration.
    /// - Parameter camera: for a camera, the mode chosen from what it offers (its capsfilter is set later).
    static func scanGraph(_ c: RunConfiguration, camera: CameraChoice? = nil) -> GraphPlan {
        var plan = GraphPlan()
        SourceWiring.plan(c, camera: camera, into: &plan)
        plan.add("t. ! queue name=scanq ! videocrop name=crop ! videoconvert name=scanconv ! appsink name=scan")
        for b in c.branches where !b.annotated {
            plan.add("t. ! queue name=branch-\(b.name)")
            plan.addFragment("! \(b.launch)")
        }
        if c.draws { OutputWiring.plan(c, into: &plan) }
        return plan
    }
}
