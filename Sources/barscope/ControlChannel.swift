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
            if path == "-" {
                while let line = Self.readLine(FileHandle.standardInput) { perform(line) }
                return
            }
            // A FIFO: each writer (`echo "cycle end" > FIFO` from a PLC's script) opens it, writes and closes it, and
            // the reader then sees the end of the file: it is opened again for the next writer. Opening blocks
            // until a writer comes, here on the reading thread.
            while true {
                guard let input = FileHandle(forReadingAtPath: path) else {
                    report(.warning(message: "\(path): cannot read the control file", source: "control"))
                    return
                }
                while let line = Self.readLine(input) { perform(line) }
                try? input.close()
                var info = stat()
                guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFIFO else { return }
            }
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
        do {
            try controller.perform(line)
        } catch {
            report(.warning(message: "control '\(line)': \(error)", source: "control"))
        }
    }
}
