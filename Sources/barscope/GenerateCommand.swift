import Barscope
import Foundation

/// `barscope generate OUT.mp4|.mkv|.webm`: demo media with known truth.
enum GenerateCommand {
    static func main(_ tokens: [String]) throws -> Int32 {
        var options = DemoOptions()
        var truthPath: String? = nil
        var help = false
        var args = Arguments(command: "generate", tokens)
        try args.parse { option, next in
            switch option {
            case "--size": options.size = try parseSize(try next(), option: "--size")
            case "--fps": options.fps = try parseInt(try next(), option: "--fps", min: 1)
            case "--frames": options.frames = try parseInt(try next(), option: "--frames", min: 1)
            case "--truth": truthPath = try next()
            case "--seed":
                // The small-codes and the mixed scenes' texts and looks.
                options.seed = UInt64(try parseInt(try next(), option: "--seed", min: 0))
                options.mix.seed = options.seed
            case "--scene":
                let v = try next()
                guard let kind = DemoScene.Kind(rawValue: v) else {
                    throw UsageError("--scene '\(v)': expected codes, conveyor, small, hard or mix")
                }
                options.scene = kind
            case "--codes": options.mix.codes = try parseInt(try next(), option: option, min: 1)
            case "--module":
                let v = try next()
                guard let m = Double(v), m >= 0.5, m <= 64 else {
                    throw UsageError("--module '\(v)': expected pixels per module, 0.5 to 64")
                }
                options.mix.module = m
            case "--speed":
                let v = try next()
                guard let s = Double(v), s >= 0, s <= 200 else {
                    throw UsageError("--speed '\(v)': expected pixels per frame, 0 to 200")
                }
                options.mix.speed = s
            case "--appear-every": options.mix.appearEvery = try parseInt(try next(), option: option, min: 0)
            case "--blur": options.mix.blur = try parseInt(try next(), option: option, min: 0)
            case "--only-1d": options.mix.only1D = true
            case "--bitrate": options.bitrate = try parseInt(try next(), option: option, min: 1)
            case "--help", "-h": help = true
            default: return false
            }
            return true
        }
        if help {
            print(Help.generate)
            return 0
        }
        guard args.positionals.count == 1, let out = args.positionals.first else {
            throw UsageError("generate needs one output file (see 'barscope generate --help')")
        }
        switch (out as NSString).pathExtension.lowercased() {
        case "jsonl": truthPath = out
        case "webm": try DemoClip.writeWebM(to: out, options: options)
        case "mkv": try DemoClip.writeMatroska(to: out, options: options)
        case "mp4": try DemoClip.writeMP4(to: out, options: options)
        default: throw UsageError("generate '\(out)': name it .mp4, .mkv, .webm (media) or .jsonl (the truth alone)")
        }
        if let truthPath {
            let text = DemoClip.truthLines(options: options).joined(separator: "\n") + "\n"
            do { try text.write(toFile: truthPath, atomically: true, encoding: .utf8) } catch {
                throw BarscopeError.badInput("\(truthPath): cannot write truth (\(error.localizedDescription))")
            }
        }
        return 0
    }
}
