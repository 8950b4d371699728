import Barscope
import CBarscope
import Foundation

// barscope: a thin command line over the Barscope library. Messages go to standard error, one line each;
// standard output carries results only.

func fail(_ message: String, code: Int32) -> Never {
    // One line whatever the message quotes: a value with a newline or a terminal escape in it (found by the fuzzer
    // in `-S $'i25.di\r...'`) is shown escaped, so that it cannot forge a second line or drive the terminal.
    let line = String(
        message.unicodeScalars.map { s -> String in
            s.properties.generalCategory == .control ? s.escaped(asASCII: true) : String(s)
        }.joined())
    FileHandle.standardError.write(Data("barscope: \(line)\n".utf8))
    exit(code)
}

// glibc gives each thread that allocates its own malloc arena, up to 8 per core: with many streams in one process
// (a decoder, queues and scanning threads each) the arenas hold freed frames apart, and resident memory grew by
// 48 MB per added 1080p RTSP stream against 41 MB with one arena per core (measured, 3 streams in `serve`).
bs_limit_malloc_arenas(Int32(max(2, ProcessInfo.processInfo.activeProcessorCount)))

let argv = Array(CommandLine.arguments.dropFirst())
guard let first = argv.first else {
    FileHandle.standardError.write(Data((Help.main + "\n").utf8))
    exit(2)
}
let rest = Array(argv.dropFirst())

do {
    switch first {
    case "--help", "-h", "help":
        print(Help.main)
    case "--version", "-V":
        print(Help.version)
    case "scan":
        exit(try ScanCommand.main(rest))
    case "run":
        exit(try RunCommand.main(rest))
    case "serve":
        exit(try ServeCommand.main(rest))
    case "search":
        exit(try SearchCommand.main(rest))
    case "index":
        exit(try IndexCommand.main(rest))
    case "generate":
        exit(try GenerateCommand.main(rest))
    case "pipelines":
        exit(try PipelinesCommand.list(rest))
    case "validate":
        exit(try PipelinesCommand.validate(rest))
    default:
        if first.hasPrefix("-") { throw UsageError("unknown option '\(first)' (see 'barscope --help')") }
        throw UsageError("unknown command '\(first)' (see 'barscope --help')")
    }
} catch let e as UsageError {
    fail(e.description, code: 2)
} catch let e as BarscopeError {
    fail(e.description, code: e.exitCode)
} catch {
    fail("\(error)", code: 3)
}
