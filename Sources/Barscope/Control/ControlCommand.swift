extension ScanController {
    /// One `--control` command, as a person types it or a program sends it (the service's control route, the MQTT
    /// control topic):
    ///
    ///     viewfinder 16:9 [animate N]       viewfinder off          region 0.1,0.1,0.8,0.8 [animate N]
    ///     symbologies disable qrcode.enable  engine zbar|zxing|both  style box-color=#FF0000 labels=off
    ///     pause                              resume                  stop
    ///     cycle start [LABEL]                cycle end
    ///
    /// - Throws: ``BarscopeError/badValue`` naming what is wrong with it; nothing changes then.
    public func perform(_ line: String) throws {
        var words = line.split(separator: " ").map(String.init)
        guard let command = words.first else { throw BarscopeError.badValue("empty command") }
        words.removeFirst()
        switch command {
        case "pause": pause()
        case "resume": resume()
        case "stop": requestStop()
        case "viewfinder", "region":
            var frames = 0
            if let i = words.firstIndex(of: "animate") {
                guard i + 1 < words.count, let n = Int(words[i + 1]), n >= 0 else {
                    throw BarscopeError.badValue("animate: expected a whole number of frames ≥ 0 (animate 8)")
                }
                frames = n
                words.removeSubrange(i...(i + 1))
            }
            guard words.count == 1 else { throw BarscopeError.badValue("expected one value") }
            let current = settings.values.viewfinder
            let v =
                command == "region"
                ? try Viewfinder.parse(aspect: "off", region: words[0])
                : try Viewfinder.parse(aspect: words[0], insets: current.minimumInset)
            try setViewfinder(v, animationFrames: frames)
        case "symbologies":
            setDecoder(try ScannerSettings(words.map { $0.hasPrefix("-S") ? String($0.dropFirst(2)) : $0 }))
        case "engine":
            guard words.count == 1 else { throw BarscopeError.badValue("expected zbar, zxing or both") }
            setDecoder(engine: try Engine.parse(words[0]))
        case "cycle":
            switch words.first {
            case "start":
                let label = words.dropFirst().joined(separator: " ")
                try cycles.start(label: label.isEmpty ? nil : label)
            case "end" where words.count == 1: try cycles.end()
            default: throw BarscopeError.badValue("expected 'cycle start [LABEL]' or 'cycle end'")
            }
        case "style":
            // On the current style: successive `style` commands add up.
            try settings.updateStyle { try $0.apply(words.joined(separator: ";")) }
        default:
            throw BarscopeError.badValue(
                "unknown command '\(command)' (viewfinder, region, symbologies, engine, style, cycle, pause, resume, stop)"
            )
        }
    }
}
