import Foundation

/// Where `--publish` sends events: an MQTT broker (libmosquitto) or Kafka brokers (librdkafka).
///
///     mqtt://[USER[:PASSWORD]@]HOST[:PORT]/PREFIX     mqtts://... (TLS, the system's CA certificates)
///     kafka://HOST[:PORT][,HOST[:PORT]...]/TOPIC
///
/// An MQTT password comes from the URL, else `$BARSCOPE_MQTT_PASSWORD`, else the file `$BARSCOPE_MQTT_PASSWORD_FILE`;
/// it is never shown (`redacted`).
public struct PublishTarget: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable { case mqtt, mqtts, kafka }
    public var kind: Kind
    /// host:port pairs (one for MQTT).
    public var hosts: [(host: String, port: Int)]
    public var user: String?
    public var password: String?
    /// MQTT: the topic prefix; Kafka: the topic.
    public var path: String

    public static func == (a: PublishTarget, b: PublishTarget) -> Bool { a.description == b.description }

    /// The URL without its password: what messages and file names show.
    public var description: String {
        let who = user.map { $0 + "@" } ?? ""
        return "\(kind.rawValue)://\(who)\(hosts.map { "\($0.host):\($0.port)" }.joined(separator: ","))/\(path)"
    }

    /// A name for the sink's spool folder: letters, digits, '.', '-'.
    public var folderName: String {
        let raw = "\(kind.rawValue)-\(hosts.map { "\($0.host)-\($0.port)" }.joined(separator: "_"))-\(path)"
        return String(raw.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" ? $0 : "_" })
    }

    /// - Throws: ``BarscopeError/badValue`` naming what is wrong, never the password.
    public static func parse(_ text: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws -> PublishTarget
    {
        let shown = Redact.uri(text)
        func bad(_ why: String) -> BarscopeError { .badValue("--publish '\(shown)': \(why)") }
        guard let schemeEnd = text.range(of: "://") else {
            throw bad("expected mqtt://HOST[:PORT]/PREFIX, mqtts://... or kafka://HOST[:PORT][,HOST...]/TOPIC")
        }
        guard let kind = Kind(rawValue: String(text[..<schemeEnd.lowerBound]).lowercased()) else {
            throw bad("unknown scheme '\(text[..<schemeEnd.lowerBound])' (mqtt, mqtts or kafka)")
        }
        var rest = String(text[schemeEnd.upperBound...])
        guard let slash = rest.firstIndex(of: "/") else {
            throw bad(kind == .kafka ? "no topic (kafka://HOST/TOPIC)" : "no topic prefix (mqtt://HOST/PREFIX)")
        }
        let path = String(rest[rest.index(after: slash)...])
        rest = String(rest[..<slash])
        guard !path.isEmpty, !path.contains("#"), !path.contains("+") else {
            throw bad(kind == .kafka ? "no topic (kafka://HOST/TOPIC)" : "a topic prefix without '#' or '+' is needed")
        }
        var user: String? = nil
        var password: String? = nil
        if let at = rest.lastIndex(of: "@") {
            let info = rest[..<at]
            rest = String(rest[rest.index(after: at)...])
            if let colon = info.firstIndex(of: ":") {
                user = String(info[..<colon]).removingPercentEncoding
                password = String(info[info.index(after: colon)...]).removingPercentEncoding
            } else {
                user = String(info).removingPercentEncoding
            }
            if kind == .kafka { throw bad("a user for Kafka is not supported (SASL is not built)") }
        }
        var hosts: [(String, Int)] = []
        for part in rest.split(separator: ",", omittingEmptySubsequences: false) {
            var host = String(part)
            var port = kind == .kafka ? 9092 : kind == .mqtts ? 8883 : 1883
            if let colon = host.lastIndex(of: ":"), !host.hasSuffix("]") {
                guard let p = Int(host[host.index(after: colon)...]), (1...65535).contains(p) else {
                    throw bad("port '\(host[host.index(after: colon)...])': expected 1 to 65535")
                }
                port = p
                host = String(host[..<colon])
            }
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty else { throw bad("no host") }
            hosts.append((host, port))
        }
        if kind != .kafka && hosts.count > 1 { throw bad("one MQTT broker per --publish (give it again for another)") }
        if kind != .kafka, user != nil, password == nil {
            if let p = environment["BARSCOPE_MQTT_PASSWORD"] {
                password = p
            } else if let file = environment["BARSCOPE_MQTT_PASSWORD_FILE"] {
                guard let data = FileContents.read(atPath: file) else {
                    throw bad("cannot read the password file \(file) ($BARSCOPE_MQTT_PASSWORD_FILE)")
                }
                password =
                    String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(
                        String.init) ?? ""
            }
        }
        return PublishTarget(kind: kind, hosts: hosts, user: user, password: password, path: path)
    }
}
