import Foundation

/// A URL keychaind may call out to (a token endpoint, an issuer's key set or discovery document):
/// `https`, or plain `http` to a loopback address only (a setting makes the server call out,
/// and its traffic carries secrets or decides who logs in).
public struct TokenEndpointURL: Sendable, Equatable, CustomStringConvertible {
    public let text: String
    public let isHTTPS: Bool

    /// Checks `text`; errSecParam naming what is wrong, and the setting by `key`.
    public init(_ text: String, key: String = "tokenEndpoint") throws(KeychainError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else {
            throw KeychainError.param("\"\(key)\" must be an absolute http(s) URL")
        }
        guard components.user == nil, components.password == nil, components.fragment == nil else {
            throw KeychainError.param("\"\(key)\" must not carry credentials or a fragment")
        }
        switch scheme {
        case "https":
            isHTTPS = true
        case "http":
            guard Self.isLoopback(host) else {
                throw KeychainError.param("\"\(key)\" must be https (plain http only to a loopback address)")
            }
            isHTTPS = false
        default:
            throw KeychainError.param("\"\(key)\" must be an absolute http(s) URL")
        }
        self.text = text
    }

    public var description: String { text }

    /// `localhost` (which the token endpoint client pins to 127.0.0.1 and ::1), `::1`, or
    /// 127.0.0.0/8 written as four canonical decimal numbers. Anything else is a host name to
    /// libcurl: `127.0.0.08` is not octal to it, so it would ask DNS, which may answer anything.
    public static func isLoopback(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare.lowercased() == "localhost" || bare == "::1" { return true }
        let parts = bare.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4,
            parts.allSatisfy({ part in UInt8(part).map { String($0) == part } ?? false })
        else { return false }
        return parts[0] == "127"
    }
}
