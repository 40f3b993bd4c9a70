public import KeychainAPI

/// A request as the transport hands it over, independent of libmicrohttpd: the path as sent
/// (percent-encoded: the router decodes each segment after matching), the query already
/// percent-decoded, header names lower-cased, the whole body assembled.
public struct HTTPRequest: Sendable {
    /// One query-string parameter, as the API's decoders read it.
    public typealias QueryItem = QueryParameter

    public var method: HTTPMethod { storage.method }
    public var path: String { storage.path }
    public var queryItems: [QueryItem] { storage.queryItems }
    /// (lower-cased name, value) in arrival order.
    public var headers: [(name: String, value: String)] { storage.headers }
    public var body: [UInt8] { storage.body }
    /// The client's address: the peer's, or behind a trusted proxy the one its `X-Forwarded-For`
    /// names (`TrustedProxies`). Every per-address limit and audit line counts by it.
    public var remoteAddress: String? { storage.remoteAddress }

    /// The fields, in one shared box: a request is handed on several times per answer (to the
    /// route's context, the audit entry, the authenticator), and each copy is then one reference
    /// counted instead of six.
    private let storage: Storage

    private final class Storage: Sendable {
        let method: HTTPMethod
        let path: String
        let queryItems: [QueryItem]
        let headers: [(name: String, value: String)]
        let body: [UInt8]
        let remoteAddress: String?

        init(
            method: HTTPMethod, path: String, queryItems: [QueryItem], headers: [(name: String, value: String)],
            body: [UInt8], remoteAddress: String?
        ) {
            self.method = method
            self.path = path
            self.queryItems = queryItems
            self.headers = headers
            self.body = body
            self.remoteAddress = remoteAddress
        }
    }

    public init(
        method: HTTPMethod, path: String, queryItems: [QueryItem] = [],
        headers: [(name: String, value: String)] = [], body: [UInt8] = [], remoteAddress: String? = nil
    ) {
        self.init(
            method: method, path: path, queryItems: queryItems,
            lowercasedHeaders: headers.contains { Self.hasUppercase($0.name) }
                ? headers.map { (name: Self.hasUppercase($0.name) ? $0.name.lowercased() : $0.name, value: $0.value) }
                : headers,
            body: body, remoteAddress: remoteAddress)
    }

    /// For the transport, which lower-cases header names as it copies them: nothing to check.
    package init(
        method: HTTPMethod, path: String, queryItems: [QueryItem], lowercasedHeaders headers: [(name: String, value: String)],
        body: [UInt8], remoteAddress: String?
    ) {
        storage = Storage(
            method: method, path: path, queryItems: queryItems, headers: headers, body: body,
            remoteAddress: remoteAddress)
    }

    /// The first value of a header, by case-insensitive name.
    public func header(_ name: String) -> String? {
        let lowered = Self.hasUppercase(name) ? name.lowercased() : name
        return headers.first { $0.name == lowered }?.value
    }

    private static func hasUppercase(_ name: String) -> Bool {
        name.utf8.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
    }
}

/// An HTTP method; any token is representable so unknown methods reach the router's 405.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public static let get = HTTPMethod("GET")
    public static let head = HTTPMethod("HEAD")
    public static let post = HTTPMethod("POST")
    public static let put = HTTPMethod("PUT")
    public static let patch = HTTPMethod("PATCH")
    public static let delete = HTTPMethod("DELETE")
    /// Vault's method for listing a folder (`LIST /v1/<mount>/metadata/<folder>`).
    public static let list = HTTPMethod("LIST")

    public var description: String { rawValue }
}
