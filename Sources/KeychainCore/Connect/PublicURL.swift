import Foundation

/// An origin browsers reach: `https://host[:port]`, or plain `http://` to a loopback address only
/// (a browser carries codes, cookies and redirects through it). Used for `server.publicURL`, where
/// keychaind itself is reached, and for the origins a connect session may return the browser to
/// (`connect.returnToOrigins`). Kept without a trailing `/`, scheme and host lowercased, so that
/// origins compare by their text.
public struct PublicURL: Sendable, Hashable, CustomStringConvertible {
    /// `scheme://host[:port]`, nothing after it.
    public let origin: String
    public let isHTTPS: Bool

    /// Checks `text`; errSecParam saying what is wrong. A path other than `/`, a query, a fragment
    /// or credentials are refused: a public URL is an origin.
    public init(_ text: String) throws(KeychainError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            let host = components.host?.lowercased(), !host.isEmpty
        else { throw KeychainError.param("\"\(text)\" is not an absolute http(s) URL") }
        guard components.user == nil, components.password == nil, components.query == nil, components.fragment == nil,
            components.path.isEmpty || components.path == "/"
        else { throw KeychainError.param("\"\(text)\" must be an origin (scheme, host and port), with no path, query or fragment") }
        switch scheme {
        case "https": isHTTPS = true
        case "http":
            guard TokenEndpointURL.isLoopback(host) else {
                throw KeychainError.param("\"\(text)\" must be https (plain http only to a loopback address)")
            }
            isHTTPS = false
        default: throw KeychainError.param("\"\(text)\" is not an absolute http(s) URL")
        }
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        origin = "\(scheme)://\(bracketed)" + (components.port.map { ":\($0)" } ?? "")
    }

    /// The origin of an absolute URL with any path and query (a `returnTo`), nil when it is none
    /// this type accepts or it carries credentials or a fragment.
    public static func origin(of url: String) -> PublicURL? {
        guard var components = URLComponents(string: url), components.user == nil, components.password == nil,
            components.fragment == nil
        else { return nil }
        components.path = ""
        components.query = nil
        guard let text = components.string else { return nil }
        return try? PublicURL(text)
    }

    /// `origin` followed by `path` (which starts with `/`).
    public func appending(path: String) -> String { origin + path }

    public var description: String { origin }
}
