public import Foundation

/// One run of the connect flow (docs/api.md, "Getting the first token"): a client asked for a
/// user's consent at a provider, and the tokens are to land under `key`. The browser's `state`
/// and its binding cookie are kept only as SHA-256 hashes; the PKCE verifier is a secret, sealed
/// where it is stored and bound to the session's row.
public struct ConnectSession: Sendable {
    /// The session's public name (`connectId`): random, at least 128 bits, unrelated to `state`.
    public var id: String
    /// The provider (`OAuthProvider.name`) the user is sent to.
    public var provider: String
    /// Where the tokens go: service, user and the access group.
    public var key: RefreshKey
    /// The scopes asked for (the session's own, else the provider's), in order.
    public var scopes: [String]
    /// The exact redirect URI sent with the authorization request; the code exchange sends it again.
    public var redirectURI: String
    /// Where the browser is sent once the session ends, nil for keychaind's own page.
    public var returnTo: String?
    /// The PKCE code verifier (RFC 7636 §4.1): 43 characters of base64url.
    public var verifier: SecretBytes
    /// SHA-256 of the `state` the browser carries to the provider, nil until the browser's first
    /// hop (`/go`) and again once a callback used it.
    public var stateHash: [UInt8]?
    /// SHA-256 of the browser's binding cookie, set by its first hop; nil until then.
    public var browserHash: [UInt8]?
    public var createdAt: Date
    public var expiresAt: Date
    public var outcome: ConnectOutcome

    public init(
        id: String, provider: String, key: RefreshKey, scopes: [String], redirectURI: String, returnTo: String?,
        verifier: SecretBytes, createdAt: Date, expiresAt: Date, stateHash: [UInt8]? = nil, browserHash: [UInt8]? = nil,
        outcome: ConnectOutcome = .pending
    ) {
        self.id = id
        self.provider = provider
        self.key = key
        self.scopes = scopes
        self.redirectURI = redirectURI
        self.returnTo = returnTo
        self.verifier = verifier
        self.stateHash = stateHash
        self.browserHash = browserHash
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.outcome = outcome
    }

    /// The outcome as answered at `now`: a pending session past its time is `failed` with `expired`.
    public func outcome(at now: Date) -> ConnectOutcome {
        if outcome == .pending, expiresAt <= now { return .failed(error: ConnectOutcome.expired) }
        return outcome
    }
}

/// How a connect session ended, or that it has not.
public enum ConnectOutcome: Sendable, Equatable {
    case pending
    /// Tokens stored; `refreshable` when a refresh token came (and a refresh setting naming the
    /// provider was stored with it); the scope the provider granted, when it said.
    case connected(refreshable: Bool, grantedScope: String?)
    /// The error code: the provider's (RFC 6749 §4.1.2.1 codes, else `provider_error`), or one of
    /// keychaind's (`expired`, `browser_mismatch`, `issuer_mismatch`, `exchange_failed`, ...).
    case failed(error: String)

    public static let expired = "expired"
    public static let browserMismatch = "browser_mismatch"
    public static let issuerMismatch = "issuer_mismatch"
    /// The provider's error was not one RFC 6749 §4.1.2.1 names: not repeated as sent. Also a
    /// callback with neither `code` nor `error`, or whose provider was removed meanwhile.
    public static let providerError = "provider_error"
    /// The token endpoint refused the code or could not be reached (the reason is logged).
    public static let exchangeFailed = "exchange_failed"
    /// Meanwhile the service was given a refresh setting with another provider or endpoint.
    public static let settingConflict = "setting_conflict"
    /// The tokens could not be stored (the reason is logged).
    public static let storeFailed = "store_failed"

    /// The authorization-error codes of RFC 6749 §4.1.2.1, the only provider codes repeated as sent.
    public static let authorizationErrors: Set<String> = [
        "invalid_request", "unauthorized_client", "access_denied", "unsupported_response_type", "invalid_scope",
        "server_error", "temporarily_unavailable",
    ]

    /// `pending`, `connected` or `failed`, as answered.
    public var name: String {
        switch self {
        case .pending: "pending"
        case .connected: "connected"
        case .failed: "failed"
        }
    }
}

/// What a browser's first hop (`/go`) found.
public enum BrowserBinding: Sendable, Equatable {
    /// The session is now bound to this browser with a new `state` (its first hop, or the same
    /// browser again before its callback: the newest `state` is the one a callback must bring).
    case bound
    /// Another browser holds the session, or its callback has begun: nothing changed.
    case heldElsewhere
    /// No pending session of that id (unknown, ended or expired).
    case notPending
}

/// Where connect sessions live: a table of each backend, shared by every node. A `state` is
/// consumed once, atomically, whichever node the callback reaches.
public protocol ConnectSessionStore: Sendable {
    /// Stores a new session (pending, no browser yet).
    func create(_ session: ConnectSession) throws
    /// The session, nil when there is none of that id (or it was purged).
    func session(id: String) throws -> ConnectSession?
    /// The browser's first hop at `now`: when the session is pending, unexpired and either unbound
    /// or bound to `browserHash` with its callback not begun, binds it and stores `stateHash` as
    /// the state a callback must bring.
    func bindBrowser(id: String, browserHash: [UInt8], stateHash: [UInt8], at now: Date) throws -> BrowserBinding
    /// The callback: takes the pending, unexpired session whose state hashes to `stateHash`, and
    /// forgets its state in the same statement, so that one callback (on any node) gets it and
    /// every other finds nothing. Nil when there is none.
    func consumeState(_ stateHash: [UInt8], at now: Date) throws -> ConnectSession?
    /// Records the outcome of a pending session; false when it was no longer pending.
    func finish(id: String, outcome: ConnectOutcome) throws -> Bool
    /// Of `ids`, those whose sessions are no longer pending (ended, or gone): one query for every
    /// waiter of a node.
    func ended(among ids: [String]) throws -> Set<String>
    /// Removes sessions that expired before `time`; how many.
    func purge(expiredBefore time: Date) throws -> Int
}
