public import KeychainAPI
public import KeychainCore
import Synchronization

/// What a handler gets: the request, its path parameters, the authenticated client
/// (nil only on open routes), and the body as JSON, parsed when first asked for and kept for the
/// request's later readers: the auditor and the handler read the same parse, and a request nobody
/// asks the body of (every GET) never has it parsed.
///
/// Only what handlers read: what the chain's steps tell each other is in `Exchange`, beside it.
public struct RequestContext: Sendable {
    public let request: HTTPRequest
    public let parameters: PathParameters
    public internal(set) var client: Client?
    /// The record of the token the caller presented (nil only on open routes).
    public internal(set) var token: TokenRecord?
    /// Whether the handler may block its thread for a token exchange (server-side refresh).
    public let exchangeWait: ExchangeWait
    /// Nil for a request without a body: there is nothing to keep (and nothing to allocate on
    /// the token fetch and item read).
    private let parsedBody: ParsedBody?

    init(request: HTTPRequest, parameters: PathParameters, client: Client? = nil, exchangeWait: ExchangeWait = .block) {
        let parsedBody = request.body.isEmpty ? nil : ParsedBody()
        self.request = request
        self.parameters = parameters
        self.client = client
        self.exchangeWait = exchangeWait
        self.parsedBody = parsedBody
    }

    /// The authenticated caller; only open routes have none.
    public var caller: Client {
        guard let client else { preconditionFailure("handler of an open route asked for its caller") }
        return client
    }

    /// The record of the caller's token; only open routes have none.
    public var callerToken: TokenRecord {
        guard let token else { preconditionFailure("handler of an open route asked for its caller's token") }
        return token
    }

    /// The body as one JSON object, parsed at most once per request; errSecParam when it is
    /// not one (an empty body included).
    public func jsonBody() throws -> JSONBody {
        guard let parsedBody else { return try JSONBody(parsing: []) }
        return try parsedBody.value(of: request.body)
    }
}

/// A body's parse, or why it failed, once made.
private final class ParsedBody: Sendable {
    private let result = Mutex<Result<JSONBody, KeychainError>?>(nil)

    func value(of bytes: [UInt8]) throws -> JSONBody {
        try result.withLock { result in
            if let result { return result }
            let parsed = Result { () throws(KeychainError) in try JSONBody(parsing: bytes) }
            result = parsed
            return parsed
        }.get()
    }
}
