import Barscope

/// A minimal command-line reader: `--name value`, `--name=value`, flags, `-S value` and `-Svalue`.
/// Unknown options are errors that name the option.
struct Arguments {
    private var tokens: [String]
    private(set) var positionals: [String] = []
    let command: String

    init(command: String, _ tokens: [String]) {
        self.command = command
        self.tokens = tokens
    }

    /// Walks the tokens; `handle` returns false for an option it does not know.
    mutating func parse(_ handle: (_ option: String, _ next: () throws -> String) throws -> Bool) throws {
        var i = 0
        var onlyPositionals = false
        while i < tokens.count {
            let t = tokens[i]
            i += 1
            if onlyPositionals || !t.hasPrefix("-") || t == "-" {
                positionals.append(t)
                continue
            }
            if t == "--" {
                onlyPositionals = true
                continue
            }
            var option = t
            var inline: String? = nil
            if t.hasPrefix("--"), let eq = t.firstIndex(of: "=") {
                option = String(t[..<eq])
                inline = String(t[t.index(after: eq)...])
            } else if t.hasPrefix("-S") && t.count > 2 {
                option = "-S"
                inline = String(t.dropFirst(2))
            }
            let tokensCopy = tokens
            var consumed = false
            let next: () throws -> String = {
                if let v = inline { return v }
                guard i < tokensCopy.count else { throw UsageError("\(option) needs a value") }
                consumed = true
                return tokensCopy[i]
            }
            guard try handle(option, next) else {
                throw UsageError("unknown option '\(option)' (see 'barscope \(command) --help')")
            }
            if consumed { i += 1 }
        }
    }
}

/// A mistake on the command line: exit code 2.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}

func parseInt(_ text: String, option: String, min: Int = 0) throws -> Int {
    guard let v = Int(text), v >= min else { throw UsageError("\(option) '\(text)': expected a whole number ≥ \(min)") }
    return v
}

func parseSize(_ text: String, option: String) throws -> Size {
    guard let s = Size(parsing: text), s.width >= 64, s.height >= 64, s.width <= 8192, s.height <= 8192 else {
        throw UsageError("\(option) '\(text)': expected WIDTHxHEIGHT between 64x64 and 8192x8192")
    }
    return s
}
