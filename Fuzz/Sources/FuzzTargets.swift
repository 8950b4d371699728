import Barscope
import Foundation

// Fuzz targets for what reads untrusted text and bytes: pipeline files, -S values, viewfinder values, luma planes
// and image files. Each checks, beyond "no crash", the promise its callers rely on (one-line messages, a viewfinder
// region inside its frame), and stops the process when it is broken, so that libFuzzer keeps the input.
//
// Under libFuzzer (scripts/fuzz builds with -sanitize=fuzzer -DLIBFUZZER) the target is chosen by the environment
// variable BARSCOPE_FUZZ_TARGET; built plainly, `barscope-fuzz TARGET FILE|DIR...` replays inputs.

enum FuzzTarget: String, CaseIterable {
    case pipelineFile = "pipeline-file"
    case symbology, viewfinder, luma, image

    func run(_ data: [UInt8]) {
        switch self {
        case .pipelineFile: Self.pipelineFile(data)
        case .symbology: Self.symbology(data)
        case .viewfinder: Self.viewfinder(data)
        case .luma: Self.luma(data)
        case .image: Self.image(data)
        }
    }

    /// Failures are ours, typed and said: a BarscopeError with a message (the CLI escapes what it quotes onto one
    /// line; a first run here found values with control characters quoted raw).
    static func checkOneLine(_ error: Error) {
        guard let e = error as? BarscopeError, !e.description.isEmpty else {
            fatalError("untyped or empty error: \(error)")
        }
    }

    static func pipelineFile(_ data: [UInt8]) {
        do {
            var spec = try PipelineSpec(text: String(decoding: data, as: UTF8.self), origin: "fuzz.conf")
            // As `validate` does: the input is checked when it runs (a fuzzed path may name anything on this disk).
            try spec.set("source", "input", "demo", origin: "fuzz")
            _ = try spec.configuration()
        } catch {
            checkOneLine(error)
        }
    }

    static func symbology(_ data: [UInt8]) {
        var settings = ScannerSettings()
        for config in String(decoding: data, as: UTF8.self).split(whereSeparator: { $0 == "\n" || $0 == " " }) {
            do { try settings.add(String(config)) } catch { checkOneLine(error) }
        }
        _ = settings.zxingFormats
        _ = settings.reportsUPCA
        _ = settings.reportsUPCE
    }

    /// Lines: aspect, insets, region, secondary aspect; the first four bytes give the frame size.
    static func viewfinder(_ data: [UInt8]) {
        guard data.count >= 4 else { return }
        let size = Size(
            width: 1 + (Int(data[0]) << 8 | Int(data[1])) % 8192, height: 1 + (Int(data[2]) << 8 | Int(data[3])) % 8192)
        let lines = String(decoding: data.dropFirst(4), as: UTF8.self).split(
            separator: "\n", omittingEmptySubsequences: false
        )
        .map(String.init)
        func line(_ i: Int) -> String? { i < lines.count ? lines[i] : nil }
        do {
            var v = try Viewfinder.parse(aspect: line(0) ?? "4:3", insets: line(1) ?? "20", region: line(2))
            if let s = line(3) { v.secondaryAspectRatio = AspectRatio(parsing: s) }
            guard let r = v.region(in: size) else { return }
            guard r.x >= 0, r.y >= 0, r.width > 0, r.height > 0, r.maxX <= size.width, r.maxY <= size.height else {
                fatalError("region \(r) outside the \(size.width)x\(size.height) frame for \(lines)")
            }
            if let inner = v.secondaryRegion(inside: r),
                inner.x < r.x || inner.y < r.y || inner.maxX > r.maxX || inner.maxY > r.maxY || inner.width <= 0
                    || inner.height <= 0
            {
                fatalError("secondary region \(inner) outside the primary \(r) for \(lines)")
            }
        } catch {
            checkOneLine(error)
        }
        do { _ = try Viewfinder.parseInsets(line(1) ?? "") } catch { checkOneLine(error) }
    }

    /// The readers are made once: a ZBar scanner and a zxing-cpp reader per input would be most of the time.
    nonisolated(unsafe) static let reader = BarcodeReader(engine: .both)

    /// Bytes 0-1: width, 2: extra stride; the rest is the plane (zero-padded to whole rows).
    static func luma(_ data: [UInt8]) {
        guard data.count >= 3 else { return }
        let width = 1 + (Int(data[0]) << 8 | Int(data[1])) % 512
        let stride = width + Int(data[2]) % 8
        let pixels = Array(data.dropFirst(3))
        let height = max(1, min(512, (pixels.count + stride - 1) / stride))
        var plane = pixels + [UInt8](repeating: 0, count: max(0, stride * height - pixels.count))
        plane.withUnsafeMutableBytes { buf in
            let image = LumaImage(
                base: UnsafeRawPointer(buf.baseAddress!), width: width, height: height, stride: stride)
            for d in reader.read(image) where d.polygon.isEmpty && d.data.isEmpty {
                fatalError("empty detection \(d)")
            }
        }
    }

    nonisolated(unsafe) static let scanner = ImageScanner(engine: .both, thorough: false)
    static let imagePath = FileManager.default.temporaryDirectory.appendingPathComponent(
        "barscope-fuzz-\(getpid()).img"
    ).path

    /// The header reader on the bytes, then the whole still-image path (GStreamer's decoders included) on a file.
    static func image(_ data: [UInt8]) {
        if let s = ImageHeader.size(of: data), s.width <= 0 || s.height <= 0 { fatalError("size \(s)") }
        guard FileManager.default.createFile(atPath: imagePath, contents: Data(data)) else { return }
        do { _ = try scanner.scan(path: imagePath) } catch { checkOneLine(error) }
    }
}

#if LIBFUZZER
    import CFuzzDriver

    /// The target, chosen once by BARSCOPE_FUZZ_TARGET.
    let chosenTarget: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["BARSCOPE_FUZZ_TARGET"] ?? ""
        guard let t = FuzzTarget(rawValue: name) else {
            fatalError("set BARSCOPE_FUZZ_TARGET to one of \(FuzzTarget.allCases.map(\.rawValue))")
        }
        return t
    }()

    @main enum Fuzz {
        static func main() {
            var argc = CommandLine.argc
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            _ = chosenTarget
            exit(
                LLVMFuzzerRunDriver(&argc, &argv) { data, size in
                    chosenTarget.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
                    return 0
                })
        }
    }
#else
    @main enum Replay {
        static func main() {
            let args = Array(CommandLine.arguments.dropFirst())
            guard let name = args.first, let target = FuzzTarget(rawValue: name), args.count >= 2 else {
                print(
                    "usage: barscope-fuzz TARGET FILE|DIR...  (targets: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")))"
                )
                exit(2)
            }
            var count = 0
            for path in args.dropFirst() {
                var isDir: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else { continue }
                let files =
                    isDir.boolValue
                    ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map {
                        path + "/" + $0
                    }
                    : [path]
                for file in files {
                    guard let data = FileManager.default.contents(atPath: file) else { continue }
                    target.run([UInt8](data))
                    count += 1
                }
            }
            print("\(name): \(count) inputs replayed, no finding")
        }
    }
#endif
