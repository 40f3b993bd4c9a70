public import Foundation
public import KeychainAPI
public import KeychainCore

/// A complete response: status, headers and body.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// The item the request created, as the answer names it (nil when the answer names none):
    /// the audit line records it, taken from the typed answer rather than read back from the body.
    public var createdItem: PersistentRef?
    /// The token a login issued (its record: never the token), for the audit line.
    public var issuedToken: TokenRecord?
    /// A refused login: it spends the caller's failed-authentication budget as a refused token does.
    public var failedLogin = false
    /// A file sent as the body instead of `body` (which is then empty), without reading it into
    /// memory: the transport takes its descriptor (the backup answer). Nil for every other answer.
    public var bodyFile: ReadOnlyFile?
    /// Set instead of an answer when the request waits for a token exchange (asked with
    /// `ExchangeWait.handOff`): the transport holds no thread for it until `answer` is due.
    public var deferred: DeferredAnswer?

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// An answer whose body is `file`, sent by the transport straight from the file.
    public init(status: Int, headers: [(name: String, value: String)] = [], file: ReadOnlyFile) {
        self.init(status: status, headers: headers)
        bodyFile = file
    }

    /// A JSON answer, marked `Cache-Control: no-store` (RFC 9111 §5.2.2.5): an answer may hold a
    /// secret, a token or what exists in the vault, and no cache between keychaind and its caller
    /// may keep it.
    public static func json(status: Int = 200, _ answer: some JSONAnswer) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")],
            body: answer.encoded())
    }

    /// The error body (docs/api.md, "Errors") with the HTTP status the error maps to (or `status` when a
    /// transport-level condition decides it: 404 unknown route, 405, 413).
    public static func error(_ error: KeychainError, status: Int? = nil) -> HTTPResponse {
        var response = json(status: status ?? error.httpStatus, ErrorBody(error))
        if error.code == .authFailed { response.headers.append(("WWW-Authenticate", "Bearer")) }
        return response
    }

    /// The error in Vault's shape, `{"errors":[...]}` with Vault's status
    /// (`KeychainError.vaultAnswer`), for the routes of the Vault surface.
    public static func vaultError(_ error: KeychainError, status: Int? = nil) -> HTTPResponse {
        let answer = error.vaultAnswer(status: status)
        return json(status: answer.status, VaultErrors(answer.errors))
    }
}

/// An answer that waits for a provider's token exchange: the transport suspends the request
/// without holding a thread and, once `exchange` ends or `waitLimit` has passed, calls `answer`
/// off its worker threads and sends what it returns (never itself deferred).
public struct DeferredAnswer: Sendable {
    public let exchange: PendingExchange
    public let waitLimit: TimeInterval
    public let answer: @Sendable () -> HTTPResponse
}

/// Answers requests. The transport (libmicrohttpd) calls this from its worker threads, so it must
/// be safe to call concurrently; it never throws and never blocks on another request.
public protocol HTTPResponder: Sendable {
    /// The answer; with `exchangeWait` `.handOff`, perhaps a `deferred` one, so that the calling
    /// thread never waits for a token endpoint (`.block` waits, bounded, and never defers).
    func respond(to request: HTTPRequest, exchangeWait: ExchangeWait) -> HTTPResponse

    /// Asked by the transport once the head (method, path, query, headers) of a request that
    /// declares a body has arrived, before it keeps any byte of the body: nil to read the body
    /// and then ask `respond(to:)`, or the answer to the request as it stands (a refusal), after
    /// which the transport closes the connection without reading the body. `request.body` is empty.
    func respond(toHead request: HTTPRequest) -> HTTPResponse?

    /// The answer to a request the transport refuses before it reaches the responder (a body over
    /// the limit, ambiguous framing, a query that is not UTF-8): `error` with `status` (nil: the
    /// error's own), in the error shape of the route `head` (no body, no query) is for.
    func refusal(_ error: KeychainError, status: Int?, to head: HTTPRequest) -> HTTPResponse
}

extension HTTPResponder {
    /// Reads every body.
    public func respond(toHead request: HTTPRequest) -> HTTPResponse? { nil }

    /// keychaind's error shape.
    public func refusal(_ error: KeychainError, status: Int?, to head: HTTPRequest) -> HTTPResponse {
        .error(error, status: status)
    }

    /// The answer, waiting for a token exchange when it must (bounded): for callers that own their thread.
    public func respond(to request: HTTPRequest) -> HTTPResponse { respond(to: request, exchangeWait: .block) }
}
