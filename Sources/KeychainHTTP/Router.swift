import KeychainCore

/// Who may call a route.
public enum RouteAccess: Sendable {
    /// No token needed (`/health`).
    case open
    /// Any client with a valid token.
    case client
    /// Admin clients only; others get errSecMissingEntitlement.
    case admin
}

/// What a handler gets: the request, the path parameters, and the authenticated client (nil
/// only on open routes).
public struct RequestContext: Sendable {
    public let request: HTTPRequest
    public let parameters: [String: String]
    public let client: Client?

    /// The authenticated caller; only open routes have none.
    public var caller: Client {
        guard let client else { preconditionFailure("handler of an open route asked for its caller") }
        return client
    }
}

public typealias RouteHandler = @Sendable (RequestContext) throws -> HTTPResponse

/// Routes by method and path pattern (`/items/{class}/{persistentRef}`). Every route is served at
/// its plain path and under `/v1`. An unknown path is 404, a known path with another method 405
/// with `Allow`, both in the contract's error shape.
public struct Router: Sendable {
    public struct Route: Sendable {
        public let method: HTTPMethod
        public let pattern: String
        public let access: RouteAccess
        let segments: [Segment]
        let handler: RouteHandler
    }

    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    /// The outcome of matching a request's method and path.
    public enum Match: Sendable {
        case found(Route, parameters: [String: String])
        case methodNotAllowed(allowed: [HTTPMethod])
        case notFound
    }

    public private(set) var routes: [Route] = []

    public init() {}

    public mutating func add(
        _ method: HTTPMethod, _ pattern: String, access: RouteAccess, handler: @escaping RouteHandler
    ) {
        let segments = Self.split(pattern).map { part -> Segment in
            if part.hasPrefix("{"), part.hasSuffix("}") { return .parameter(String(part.dropFirst().dropLast())) }
            return .literal(String(part))
        }
        routes.append(Route(method: method, pattern: pattern, access: access, segments: segments, handler: handler))
    }

    /// Matches a request. `HEAD` is answered by the `GET` route of the path (libmicrohttpd sends
    /// the headers without the body). Empty segments are kept, so `/items/key/` with an empty
    /// reference is not the whole-class route `/items/key`.
    public func match(method: HTTPMethod, path: String) -> Match {
        var parts = Self.split(path)
        if parts.first == "v1" { parts.removeFirst() }
        let wanted = method == .head ? HTTPMethod.get : method
        var allowed: [HTTPMethod] = []
        // By index: copying each `Route` out would count references to its closure and arrays.
        for index in routes.indices where routes[index].segments.count == parts.count {
            guard Self.fits(routes[index].segments, parts) else { continue }
            let method = routes[index].method
            if method == wanted { return .found(routes[index], parameters: Self.bind(routes[index].segments, to: parts)) }
            if !allowed.contains(method) { allowed.append(method) }
            if method == .get, !allowed.contains(.head) { allowed.append(.head) }
        }
        return allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed)
    }

    /// The segments of a path without its leading slash; every other empty segment is kept.
    /// Scans UTF-8 bytes (`/` is ASCII), not Characters: this runs on every request.
    private static func split(_ path: String) -> [Substring] {
        let utf8 = path.utf8
        guard !utf8.isEmpty else { return [] }
        var parts: [Substring] = []
        parts.reserveCapacity(4)
        var start = utf8.startIndex
        if utf8[start] == UInt8(ascii: "/") { start = utf8.index(after: start) }
        var index = start
        while index != utf8.endIndex {
            if utf8[index] == UInt8(ascii: "/") {
                parts.append(path[start..<index])
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        parts.append(path[start..<utf8.endIndex])
        return parts
    }

    /// Whether `parts` fit the route's segments: same literals, no empty parameter.
    private static func fits(_ segments: [Segment], _ parts: [Substring]) -> Bool {
        guard segments.count == parts.count else { return false }
        for index in segments.indices {
            switch segments[index] {
            case .literal(let literal): if parts[index] != literal { return false }
            case .parameter: if parts[index].isEmpty { return false }
            }
        }
        return true
    }

    /// The path parameters of `parts`, which fit `segments`.
    private static func bind(_ segments: [Segment], to parts: [Substring]) -> [String: String] {
        var parameters: [String: String] = [:]
        for index in segments.indices {
            if case .parameter(let name) = segments[index] { parameters[name] = String(parts[index]) }
        }
        return parameters
    }
}
