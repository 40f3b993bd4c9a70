import KeychainCore

#if canImport(Glibc)
import Glibc
#endif

/// Who may call a route.
public enum RouteAccess: Sendable {
    /// No token needed (`/health`).
    case open
    /// Any client with a valid token.
    case client
    /// Admin clients only; others get errSecMissingEntitlement.
    case admin
    /// A workload login: no token, a body of at most `loginBodyBytes` (declared in its head), read
    /// only while the caller's address is within its failed-authentication budget; a refused
    /// login spends that budget (docs/api.md, "Workload login").
    case login

    /// The largest body a login reads.
    public static let loginBodyBytes = 16 * 1024

    /// Why a login's body will not be read: larger than `RouteAccess.loginBodyBytes` (declared or
    /// read), or of no declared length (chunked). Nil when it fits.
    static func loginBodyRefusal(_ request: HTTPRequest) -> KeychainError? {
        let declared = request.header("content-length").map { Int($0) ?? Int.max }
        guard request.header("transfer-encoding") == nil, (declared ?? 0) <= RouteAccess.loginBodyBytes,
            request.body.count <= RouteAccess.loginBodyBytes
        else {
            return KeychainError.param("a login's body declares its Content-Length, at most \(RouteAccess.loginBodyBytes) bytes")
        }
        return nil
    }
}

/// Whose conventions a route answers in (docs/api.md): keychaind's own (OSStatus error bodies),
/// or Vault's, for the tools written for Vault (`{"errors":[...]}`, 403 for a refused token).
public enum RouteSurface: Sendable {
    case native
    case vault
    /// Vault's when the caller's token came in `X-Vault-Token` (as Vault's tools send it), else
    /// keychaind's: the token self-service routes, which both kinds of client call.
    case vaultForVaultToken
}

public typealias RouteHandler = @Sendable (RequestContext) throws -> HTTPResponse

/// Routes by method and path pattern (`/items/{class}/{persistentRef}`). Every route is served at
/// its plain path and under `/v1`. An unknown path is 404, a known path with another method 405
/// with `Allow`, both in docs/api.md's error shape.
public struct Router: Sendable {
    /// A class, so that a match hands over one reference rather than copies of the pattern,
    /// segments and handler (each a count of references on memory every worker thread shares).
    public final class Route: Sendable {
        public let method: HTTPMethod
        public let pattern: String
        public let access: RouteAccess
        /// What the route's audit line says about its target.
        public let audit: AuditTarget
        /// Whose answers the route gives: keychaind's, or Vault's (errors as `{"errors":[...]}`).
        public let surface: RouteSurface
        let segments: [Segment]
        let handler: RouteHandler

        init(
            method: HTTPMethod, pattern: String, access: RouteAccess, audit: AuditTarget, surface: RouteSurface,
            segments: [Segment], handler: @escaping RouteHandler
        ) {
            self.method = method
            self.pattern = pattern
            self.access = access
            self.audit = audit
            self.surface = surface
            self.segments = segments
            self.handler = handler
        }
    }

    enum Segment: Sendable, Equatable {
        /// The segment's UTF-8 bytes, compared byte for byte.
        case literal([UInt8])
        case parameter(String)
        /// `{name*}`, the pattern's last segment: zero or more segments, each percent-decoded,
        /// joined by `/` (a Vault path such as `team/db/`, its trailing slash kept).
        case rest(String)
    }

    /// The outcome of matching a request's method and path.
    public enum Match: Sendable {
        case found(Route, parameters: PathParameters)
        /// `surface`: Vault's when a route of the path answers in Vault's shape (its 405 then does too).
        case methodNotAllowed(allowed: [HTTPMethod], surface: RouteSurface)
        case notFound
    }

    public private(set) var routes: [Route] = []

    public init() {}

    public mutating func add(
        _ method: HTTPMethod, _ pattern: String, access: RouteAccess, audit: AuditTarget,
        surface: RouteSurface = .native, handler: @escaping RouteHandler
    ) {
        let segments = pattern.drop(while: { $0 == "/" }).split(separator: "/", omittingEmptySubsequences: false).map { part -> Segment in
            if part.hasPrefix("{"), part.hasSuffix("*}") { return .rest(String(part.dropFirst().dropLast(2))) }
            if part.hasPrefix("{"), part.hasSuffix("}") { return .parameter(String(part.dropFirst().dropLast())) }
            return .literal(Array(part.utf8))
        }
        precondition(
            !segments.dropLast().contains { if case .rest = $0 { true } else { false } },
            "a {name*} segment ends its pattern")
        routes.append(
            Route(
                method: method, pattern: pattern, access: access, audit: audit, surface: surface, segments: segments,
                handler: handler))
    }

    /// Matches a request. `HEAD` is answered by the `GET` route of the path (libmicrohttpd sends
    /// the headers without the body). Empty segments are kept, so `/items/key/` with an empty
    /// reference is not the whole-class route `/items/key`.
    ///
    /// `path` is as the client sent it, percent-encoded: it is split at its slashes and matched
    /// first, and only then is each parameter decoded, so that `%2F` stays inside its segment
    /// (`/tokens/svc%2Fauthorization` is the service `svc/authorization`, not the authorization
    /// route) and literal segments match only as spelled.
    public func match(method: HTTPMethod, path: String) -> Match {
        let wanted = method == .head ? HTTPMethod.get : method
        // On the path's UTF-8 bytes, with segment ranges in a temporary buffer: this runs on
        // every request, and Substrings would count references to the path's storage.
        return path.withUTF8Bytes { path in
            let slashes = path.reduce(0) { $0 + ($1 == UInt8(ascii: "/") ? 1 : 0) }
            return withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: slashes + 1) { buffer in
                var parts = Self.split(path, into: buffer)
                if parts.count > 0, Self.equal(path, parts[0], Self.versionPrefix) { parts = UnsafeMutableBufferPointer(rebasing: parts[1...]) }
                var allowed: [HTTPMethod] = []
                var surface = RouteSurface.native
                // By index: iterating by value would count a reference on every route looked at.
                for index in routes.indices where Self.mayFit(routes[index].segments, count: parts.count) {
                    guard Self.fits(routes[index].segments, path, parts) else { continue }
                    let method = routes[index].method
                    if method == wanted {
                        return .found(routes[index], parameters: Self.bind(routes[index].segments, path, parts))
                    }
                    if !allowed.contains(method) { allowed.append(method) }
                    if routes[index].surface == .vault { surface = .vault }
                    if method == .get, !allowed.contains(.head) { allowed.append(.head) }
                }
                return allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed, surface: surface)
            }
        }
    }

    private static let versionPrefix = Array("v1".utf8)

    /// The byte ranges of the path's segments, without its leading slash; every other empty
    /// segment is kept. `buffer` holds one more range than the path has slashes.
    private static func split(
        _ path: UnsafeBufferPointer<UInt8>, into buffer: UnsafeMutableBufferPointer<Range<Int>>
    ) -> UnsafeMutableBufferPointer<Range<Int>> {
        guard !path.isEmpty else { return UnsafeMutableBufferPointer(rebasing: buffer[0..<0]) }
        var count = 0
        var start = path[0] == UInt8(ascii: "/") ? 1 : 0
        for index in start..<path.count where path[index] == UInt8(ascii: "/") {
            buffer.initializeElement(at: count, to: start..<index)
            count += 1
            start = index + 1
        }
        buffer.initializeElement(at: count, to: start..<path.count)
        return UnsafeMutableBufferPointer(rebasing: buffer[0...count])
    }

    private static func equal(_ path: UnsafeBufferPointer<UInt8>, _ part: Range<Int>, _ literal: [UInt8]) -> Bool {
        part.count == literal.count && literal.withUnsafeBufferPointer { literal in
            memcmp(path.baseAddress! + part.lowerBound, literal.baseAddress!, part.count) == 0
        }
    }

    /// Whether a path of `count` segments can fit `segments` (a `{name*}` takes zero or more).
    private static func mayFit(_ segments: [Segment], count: Int) -> Bool {
        if case .rest? = segments.last { return count >= segments.count - 1 }
        return segments.count == count
    }

    /// Whether `parts` fit the route's segments: same literals, no empty parameter.
    private static func fits(
        _ segments: [Segment], _ path: UnsafeBufferPointer<UInt8>, _ parts: UnsafeMutableBufferPointer<Range<Int>>
    ) -> Bool {
        guard mayFit(segments, count: parts.count) else { return false }
        for index in segments.indices {
            switch segments[index] {
            case .literal(let literal): if !equal(path, parts[index], literal) { return false }
            case .parameter: if parts[index].isEmpty { return false }
            case .rest: return true
            }
        }
        return true
    }

    /// The path parameters of `parts`, which fit `segments`, each percent-decoded. A segment that
    /// does not decode (a bad escape, a NUL, not UTF-8) is kept as sent and noted in the
    /// parameters' `problem`: the route answers errSecParam once its caller is authenticated.
    private static func bind(
        _ segments: [Segment], _ path: UnsafeBufferPointer<UInt8>, _ parts: UnsafeMutableBufferPointer<Range<Int>>
    ) -> PathParameters {
        var parameters = PathParameters()
        for index in segments.indices {
            switch segments[index] {
            case .literal:
                continue
            case .parameter(let name):
                let sent = UnsafeBufferPointer(rebasing: path[parts[index]])
                do {
                    parameters.append(name, try percentDecoded(sent, name: name))
                } catch {
                    parameters.append(name, String(decoding: sent, as: UTF8.self))
                    if parameters.problem == nil { parameters.problem = error }
                }
            case .rest(let name):
                var decoded: [String] = []
                for part in parts[index...] {
                    let sent = UnsafeBufferPointer(rebasing: path[part])
                    do {
                        decoded.append(try percentDecoded(sent, name: name))
                    } catch {
                        decoded.append(String(decoding: sent, as: UTF8.self))
                        if parameters.problem == nil { parameters.problem = error }
                    }
                }
                parameters.append(name, decoded.joined(separator: "/"))
            }
        }
        return parameters
    }

    /// A path segment percent-decoded (RFC 3986 §2.1; `+` is itself, as in any path): errSecParam
    /// for `%` without two hex digits, for a NUL (no name holds one: C strings would cut it) and
    /// for bytes that are not UTF-8. Most segments have no `%` and are copied as they are.
    static func percentDecoded(_ segment: UnsafeBufferPointer<UInt8>, name: String) throws(KeychainError) -> String {
        guard segment.contains(UInt8(ascii: "%")) else {
            guard let text = String(validatingUTF8Bytes: segment) else {
                throw KeychainError.param("the path parameter \(name) is not UTF-8")
            }
            return text
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(segment.count)
        var index = 0
        while index < segment.count {
            var byte = segment[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < segment.count, let high = hexValue(segment[index + 1]), let low = hexValue(segment[index + 2])
                else { throw KeychainError.param("the path parameter \(name) has a % not followed by two hex digits") }
                byte = high << 4 | low
                index += 2
            }
            guard byte != 0 else { throw KeychainError.param("the path parameter \(name) holds a NUL (%00)") }
            bytes.append(byte)
            index += 1
        }
        guard let text = bytes.withUnsafeBufferPointer({ String(validatingUTF8Bytes: $0) }) else {
            throw KeychainError.param("the path parameter \(name) does not decode to UTF-8")
        }
        return text
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// The `{name}` segments of a matched path, in the pattern's order. A route has at most two, so
/// they are found by comparing names: no dictionary to allocate and hash on every request.
public struct PathParameters: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (name: String, value: String)
    private var pairs: [Element] = []
    /// Why a parameter did not decode (it is then kept as sent); the route answers this error
    /// instead of calling its handler.
    var problem: KeychainError?

    public init() {}

    public init(dictionaryLiteral elements: (String, String)...) {
        pairs = elements.map { (name: $0.0, value: $0.1) }
    }

    /// The value of the parameter named `name`, nil when the pattern has none.
    public subscript(name: String) -> String? {
        pairs.first { $0.name == name }?.value
    }

    public var count: Int { pairs.count }

    mutating func append(_ name: String, _ value: String) { pairs.append((name, value)) }

    public func makeIterator() -> IndexingIterator<[Element]> { pairs.makeIterator() }

    /// The same names with the same values, in any order.
    public static func == (lhs: PathParameters, rhs: PathParameters) -> Bool {
        lhs.count == rhs.count && lhs.pairs.allSatisfy { rhs[$0.name] == $0.value }
    }
}
