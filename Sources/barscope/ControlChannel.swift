import Barscope
import Foundation

/// `--control -` (or a FIFO path): commands for a running pipeline, one a line, from another program or a person
/// at the terminal. Each command acts on the pipeline of the moment (also after a reconnection):
///
///     viewfinder 16:9 [animate N]       viewfinder off          region 0.1,0.1,0.8,0.8 [animate N]
///     symbologies disable qrcode.enable  engine zbar|zxing|both  style box-color=#FF0000 labels=off
///     pause                              resume                  stop
///
/// A command that cannot work is reported as a `warning` event naming it; the run goes on.
final class ControlChannel: Sendable {
    private let controller: ScanController
    private let report: @Sendable (Event) -> Void

    /// - Parameter report: where a command's problem goes (the event stream), as a `warning`.
    init(path: String, controller: ScanController, report: @escaping @Sendable (Event) -> Void) throws {
        self.controller = controller
        self.report = report
        if path != "-" && !FileManager.default.fileExists(atPath: path) {
            throw BarscopeError.badInput("\(path): no such control file (make one with mkfifo)")
        }
        let thread = Thread { [self] in
            // A FIFO blocks its opener until a writer comes: opened here, on the reading thread.
            guard let input = path == "-" ? FileHandle.standardInput : FileHandle(forReadingAtPath: path) else {
                report(.warning(message: "\(path): cannot read the control file", source: "control"))
                return
            }
            while let line = Self.readLine(input) { perform(line) }
        }
        thread.name = "barscope-control"
        thread.start()
    }

    static func readLine(_ handle: FileHandle) -> String? {
        var bytes: [UInt8] = []
        while true {
            let chunk = handle.readData(ofLength: 1)
            if chunk.isEmpty { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if chunk[0] == 10 { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(chunk[0])
        }
    }

    func perform(_ line: String) {
        var words = line.split(separator: " ").map(String.init)
        guard let command = words.first else { return }
        words.removeFirst()
        do {
            switch command {
            case "pause": controller.pause()
            case "resume": controller.resume()
            case "stop": controller.requestStop()
            case "viewfinder", "region":
                var frames = 0
                if let i = words.firstIndex(of: "animate"), i + 1 < words.count, let n = Int(words[i + 1]), n >= 0 {
                    frames = n
                    words.removeSubrange(i...(i + 1))
                }
                guard words.count == 1 else { throw BarscopeError.badValue("expected one value") }
                let current = controller.settings.values.viewfinder
                let v =
                    command == "region"
                    ? try Viewfinder.parse(aspect: "off", region: words[0])
                    : try Viewfinder.parse(aspect: words[0], insets: current.minimumInset.description)
                try controller.setViewfinder(v, animationFrames: frames)
            case "symbologies":
                controller.setDecoder(
                    try ScannerSettings(words.map { $0.hasPrefix("-S") ? String($0.dropFirst(2)) : $0 }))
            case "engine":
                guard words.count == 1 else { throw BarscopeError.badValue("expected zbar, zxing or both") }
                controller.setDecoder(engine: try Engine.parse(words[0]))
            case "style":
                // On the current style: successive `style` commands add up.
                try controller.settings.updateStyle { try $0.apply(words.joined(separator: ";")) }
            default:
                throw BarscopeError.badValue(
                    "unknown command (viewfinder, region, symbologies, engine, style, pause, resume, stop)")
            }
        } catch {
            report(.warning(message: "control '\(line)': \(error)", source: "control"))
        }
    }
}
