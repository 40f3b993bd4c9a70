public import Foundation
public import KeychainAPI
public import KeychainCore
public import KeychainHTTP
public import KeychainRefresh
import KeychainStore
public import Logging

/// The connect flow (docs/api.md, "Getting the first token"): a client starts a session, the
/// user's browser takes keychaind's first hop (bound to it by a cookie) to the provider, comes
/// back to the callback with a code, and keychaind exchanges it with the session's PKCE verifier
/// and stores the tokens, and a refresh setting naming the provider, in one transaction. No
/// backend service ever handles the code, the verifier or the client secret.
public final class ConnectFlow: Sendable {
    /// What the configuration says of the flow (`server.publicURL`, `connect.*`).
    public struct Settings: Sendable {
        public var publicURL: PublicURL?
        public var sessionSeconds: Int
        public var maxWaitSeconds: Int
        public var returnToOrigins: [PublicURL]

        public init(publicURL: PublicURL?, sessionSeconds: Int = 600, maxWaitSeconds: Int = 25, returnToOrigins: [PublicURL] = []) {
            self.publicURL = publicURL
            self.sessionSeconds = sessionSeconds
            self.maxWaitSeconds = maxWaitSeconds
            self.returnToOrigins = returnToOrigins
        }
    }

    /// The path of the callback under `publicURL`: the redirect URI every session sends.
    public static let callbackPath = "/v1/oauth/callback"

    private let sessions: any ConnectSessionStore
    public let waiters: ConnectWaiters
    public let settings: Settings
    private let providers: any ProviderStore
    private let refreshSettings: RefreshSettingStore
    private let endpoint: TokenEndpointClient
    private let clock: @Sendable () -> Date
    private let logger: Logger

    public init(
        sessions: any ConnectSessionStore, providers: any ProviderStore, refreshSettings: RefreshSettingStore,
        endpoint: TokenEndpointClient, waiters: ConnectWaiters, settings: Settings, logger: Logger,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.sessions = sessions
        self.providers = providers
        self.refreshSettings = refreshSettings
        self.endpoint = endpoint
        self.waiters = waiters
        self.settings = settings
        self.logger = logger
        self.clock = clock
    }

    // MARK: - POST /v1/connect

    /// Starts a session for `client`: checks the provider, the group, the scopes, `returnTo` and
    /// any refresh setting the service has; stores the session with a fresh PKCE verifier.
    public func start(_ request: ConnectStartRequest, client: Client) throws -> ConnectStartAnswer {
        let publicURL = try requirePublicURL()
        guard let group = request.accessGroup ?? client.accessGroups.first else {
            throw KeychainError.missingEntitlement("client \"\(client.name)\" has no access groups")
        }
        guard client.accessGroups.containsExactly(group) else {
            throw KeychainError.missingEntitlement("this client may not use access group \"\(group)\"")
        }
        guard let provider = try providers.provider(named: request.provider) else {
            throw KeychainError.itemNotFound("no provider named \"\(request.provider)\"")
        }
        guard provider.accessGroups.containsExactly(group) else {
            throw KeychainError.missingEntitlement(
                "provider \"\(provider.name)\" may not be used for access group \"\(group)\" (its accessGroups)")
        }
        let scopes = request.scopes ?? provider.scopes
        if let invalid = scopes.first(where: { !OAuthProvider.isValidScope($0) }) {
            throw KeychainError.param("scope \"\(invalid)\" is not a scope token (RFC 6749 §3.3)")
        }
        if let allowed = provider.allowedScopes, let refused = scopes.first(where: { !allowed.contains($0) }) {
            throw KeychainError.param("scope \"\(refused)\" is not among provider \"\(provider.name)\"'s allowedScopes")
        }
        if let returnTo = request.returnTo { try checkReturnTo(returnTo) }
        let key = RefreshKey(service: request.service, user: request.user, group: group)
        if let existing = try refreshSettings.record(key), existing.setting.provider != provider.name {
            throw KeychainError.duplicateItem(
                "\(key) has a refresh setting "
                    + (existing.setting.provider.map { "with provider \"\($0)\"" } ?? "of its own (tokenEndpoint)")
                    + "; a connect session may replace only a setting of the same provider")
        }
        let now = clock()
        let session = ConnectSession(
            id: Self.randomToken(bytes: 16), provider: provider.name, key: key, scopes: scopes,
            redirectURI: publicURL.appending(path: Self.callbackPath), returnTo: request.returnTo,
            verifier: SecretBytes(utf8: Self.randomToken(bytes: 32)), createdAt: now,
            expiresAt: now.addingTimeInterval(TimeInterval(settings.sessionSeconds)))
        try sessions.create(session)
        return ConnectStartAnswer(
            connectId: session.id, authorizationURL: publicURL.appending(path: "/v1/connect/\(session.id)/go"),
            expiresAt: session.expiresAt)
    }

    /// `returnTo` must be an absolute `https` URL (or `http` to loopback) on a listed origin.
    private func checkReturnTo(_ returnTo: String) throws {
        guard let origin = PublicURL.origin(of: returnTo) else {
            throw KeychainError.param(
                "\"returnTo\" must be an absolute https URL (http only to loopback) without credentials or fragment")
        }
        guard settings.returnToOrigins.contains(origin) else {
            throw KeychainError.param("\"returnTo\" is not on an origin listed in connect.returnToOrigins (\(origin))")
        }
    }

    // MARK: - GET /v1/connect/{id}/go

    /// The browser's first hop: binds the session to this browser (its cookie, made here when
    /// it brings none) with a new `state`, then 303 to the provider. The same browser may take
    /// the hop again until its callback (a reload, a back button: the newest state counts);
    /// another browser is refused, the session unchanged.
    public func go(id: String, request: HTTPRequest) throws -> HTTPResponse {
        let publicURL = try requirePublicURL()
        let now = clock()
        guard let session = try sessions.session(id: id), session.outcome(at: now) == .pending else {
            var page = CallbackPage.refused("This connect link is unknown, has expired or was already used.")
            page.failedLogin = true
            return page
        }
        guard let provider = try providers.provider(named: session.provider) else {
            return CallbackPage.refused("The provider of this connect link no longer exists.")
        }
        let cookie = BrowserCookie(publicURL: publicURL)
        let browser = cookie.value(in: request) ?? Self.randomToken(bytes: 32)
        let state = Self.randomToken(bytes: 32)
        switch try sessions.bindBrowser(id: id, browserHash: Self.hash(browser), stateHash: Self.hash(state), at: now) {
        case .bound:
            let location = Self.authorizationRequest(provider, session: session, state: state)
            return CallbackPage.redirect(
                to: location, extraHeaders: [("Set-Cookie", cookie.header(browser, maxAge: settings.sessionSeconds))])
        case .heldElsewhere:
            return CallbackPage.refused("This connect link was opened in another browser; start again from your application.")
        case .notPending:
            return CallbackPage.refused("This connect link has expired or was already used.")
        }
    }

    /// The provider's authorization endpoint with the request's parameters (RFC 6749 §4.1.1,
    /// RFC 7636 §4.3) and the provider's own, appended to any query it has.
    static func authorizationRequest(_ provider: OAuthProvider, session: ConnectSession, state: String) -> String {
        var parameters: [(String, String)] = [
            ("response_type", "code"), ("client_id", provider.clientId), ("redirect_uri", session.redirectURI),
            ("state", state), ("code_challenge", challenge(session.verifier)), ("code_challenge_method", "S256"),
        ]
        if let scope = OAuthProvider.scopeParameter(session.scopes) { parameters.append(("scope", scope)) }
        parameters += provider.authorizationParams.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let endpoint = provider.authorizationEndpoint.text
        let query = parameters.map { "\(QueryEncoding.encode($0.0))=\(QueryEncoding.encode($0.1))" }.joined(separator: "&")
        return endpoint + (endpoint.contains("?") ? "&" : "?") + query
    }

    /// `BASE64URL(SHA256(verifier))` (RFC 7636 §4.2).
    static func challenge(_ verifier: SecretBytes) -> String {
        var bytes = verifier.copyBytes()
        defer { SecretBytes.wipe(&bytes) }
        return Digest.sha256(bytes).withUnsafeBytes { Base64URL.encode($0) }
    }

    // MARK: - GET /v1/oauth/callback

    /// The browser's return: the session its `state` names, taken once; then the browser, the
    /// issuer and the provider's answer checked in that order, each failure ending the session
    /// with its code; on a code, the exchange and the tokens stored. An unknown, used or expired
    /// state changes nothing and spends the address's failed-authentication budget.
    public func callback(_ request: HTTPRequest) throws -> HTTPResponse {
        let publicURL = try requirePublicURL()
        let query = CallbackQuery(request.queryItems)
        guard let state = query["state"], !state.isEmpty,
            let session = try sessions.consumeState(Self.hash(state), at: clock())
        else {
            var page = CallbackPage.refused("This sign-in answer is unknown, was already used or has expired; nothing was stored.")
            page.failedLogin = true
            return page
        }
        // The state is spent: whatever fails from here on ends the session rather than leave it
        // pending until it expires.
        do {
            return try complete(session, query: query, browser: BrowserCookie(publicURL: publicURL).value(in: request))
        } catch {
            logger.warning("connect: the callback failed", metadata: ["connectId": "\(session.id)", "reason": "\(error)"])
            _ = try? sessions.finish(id: session.id, outcome: .failed(error: ConnectOutcome.storeFailed))
            waiters.sessionEnded(session.id)
            throw error
        }
    }

    /// The callback once its state named `session`: browser, issuer, the provider's answer, the
    /// exchange and the store.
    private func complete(_ session: ConnectSession, query: CallbackQuery, browser: String?) throws -> HTTPResponse {
        guard let browser, let bound = session.browserHash, constantTimeEqual(Self.hash(browser), bound) else {
            return try fail(session, ConnectOutcome.browserMismatch, refusal: "This sign-in was completed in another browser than the one that started it.")
        }
        guard let provider = try providers.provider(named: session.provider) else {
            return try end(session, .failed(error: ConnectOutcome.providerError))
        }
        if let issuer = provider.issuer, query["iss"].map({ !$0.hasSameUTF8(as: issuer) }) ?? true {
            return try fail(session, ConnectOutcome.issuerMismatch, refusal: "The sign-in answer did not come from the expected issuer.")
        }
        if let error = query["error"] {
            let code = ConnectOutcome.authorizationErrors.contains(error) ? error : ConnectOutcome.providerError
            return try end(session, .failed(error: code))
        }
        guard let code = query["code"], !code.isEmpty else {
            return try end(session, .failed(error: ConnectOutcome.providerError))
        }
        let grant: AuthorizationCodeGrant
        do {
            grant = try endpoint.exchangeCode(code, verifier: session.verifier, redirectURI: session.redirectURI, provider: provider)
        } catch {
            logger.warning(
                "connect: the code exchange failed",
                metadata: ["connectId": "\(session.id)", "provider": "\(provider.name)", "reason": "\(error)"])
            return try end(session, .failed(error: ConnectOutcome.exchangeFailed))
        }
        let now = clock()
        let refreshable = grant.tokens.refreshToken != nil
        do {
            try refreshSettings.storeConnected(
                grant.tokens, key: session.key,
                expiresAt: grant.tokens.expiresIn.map { now.addingTimeInterval(TimeInterval($0)) },
                provider: provider, connectId: session.id, at: now)
        } catch let error as KeychainError {
            logger.warning(
                "connect: the tokens could not be stored",
                metadata: ["connectId": "\(session.id)", "provider": "\(provider.name)", "reason": "\(error)"])
            let code = error.code == .duplicateItem ? ConnectOutcome.settingConflict : ConnectOutcome.storeFailed
            return try end(session, .failed(error: code))
        }
        return try end(session, .connected(refreshable: refreshable, grantedScope: grant.scope))
    }

    /// Ends the session with a failure answered as a 400 page, `returnTo` or not: the browser
    /// that brought it is not the session's, or the answer not the provider's.
    private func fail(_ session: ConnectSession, _ error: String, refusal: String) throws -> HTTPResponse {
        _ = try end(session, .failed(error: error))
        return CallbackPage.refused(refusal, error: error)
    }

    /// Records the outcome, wakes the session's waiters, and answers the browser: 303 to
    /// `returnTo` with `connectId`, `result` (and `error`), else the page.
    private func end(_ session: ConnectSession, _ outcome: ConnectOutcome) throws -> HTTPResponse {
        _ = try sessions.finish(id: session.id, outcome: outcome)
        waiters.sessionEnded(session.id)
        var metadata: Logger.Metadata = [
            "connectId": "\(session.id)", "provider": "\(session.provider)", "service": "\(session.key.service)",
            "accessGroup": "\(session.key.group)", "outcome": "\(outcome.name)",
        ]
        if case .failed(let error) = outcome { metadata["error"] = "\(error)" }
        logger.info("connect session ended", metadata: metadata)
        if let returnTo = session.returnTo {
            var parameters = [("connectId", session.id)]
            switch outcome {
            case .connected: parameters.append(("result", "connected"))
            case .failed(let error): parameters += [("result", "failed"), ("error", error)]
            case .pending: break
            }
            let query = parameters.map { "\($0.0)=\(QueryEncoding.encode($0.1))" }.joined(separator: "&")
            return CallbackPage.redirect(to: returnTo + (returnTo.contains("?") ? "&" : "?") + query)
        }
        switch outcome {
        case .connected: return CallbackPage.connected
        case .failed(let error): return CallbackPage.failed(error)
        case .pending: return CallbackPage.failed(ConnectOutcome.providerError)
        }
    }

    // MARK: - GET /v1/connect/{id}

    /// The session, for a client holding its group (errSecItemNotFound otherwise, as for an
    /// unknown one: a client learns nothing of other groups' sessions).
    public func session(id: String, client: Client) throws -> ConnectSession {
        _ = try requirePublicURL()
        guard let session = try sessions.session(id: id), client.accessGroups.containsExactly(session.key.group) else {
            throw KeychainError.itemNotFound("no connect session \"\(id)\"")
        }
        return session
    }

    public var now: Date { clock() }

    // MARK: - Pieces

    private func requirePublicURL() throws -> PublicURL {
        guard let publicURL = settings.publicURL else {
            throw KeychainError.param(
                "the connect flow needs server.publicURL (KEYCHAIND_SERVER_PUBLIC_URL): the https URL browsers reach keychaind at")
        }
        return publicURL
    }

    /// `bytes` random bytes (the system's generator) as base64url: ids, states, verifiers, cookies.
    static func randomToken(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<((count + 7) / 8)).flatMap { _ in withUnsafeBytes(of: generator.next() as UInt64) { Array($0) } }
        defer { SecretBytes.wipe(&bytes) }
        return bytes.prefix(count).withUnsafeBytes { Base64URL.encode(UnsafeRawBufferPointer($0)) }
    }

    static func hash(_ text: String) -> [UInt8] { Digest.sha256(Array(text.utf8)) }
}

/// The callback's query: the first value of each name (a repeated parameter is the provider's
/// or an attacker's, never keychaind's, and the first is what a browser shows).
struct CallbackQuery {
    private let items: [QueryParameter]

    init(_ items: [QueryParameter]) { self.items = items }

    subscript(name: String) -> String? { items.first { $0.name == name }?.value }
}

/// RFC 3986 percent-encoding for a query's names and values (unreserved characters as they are).
enum QueryEncoding {
    static func encode(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                encoded += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return encoded
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

/// The cookie that binds a browser to its sessions: one random value per browser, reused by its
/// later sessions, kept by keychaind only as a hash. `__Host-` prefixed where keychaind is
/// reached over https (Secure, Path=/, no Domain: only this origin may set or read it).
struct BrowserCookie {
    let name: String
    let secure: Bool

    init(publicURL: PublicURL) {
        secure = publicURL.isHTTPS
        name = secure ? "__Host-keychaind-connect" : "keychaind-connect"
    }

    /// The cookie's value in `request`, when it is one keychaind made (43 characters of base64url).
    func value(in request: HTTPRequest) -> String? {
        for header in request.headers where header.name == "cookie" {
            for pair in header.value.split(separator: ";") {
                let trimmed = pair.drop { $0 == " " }
                guard let equals = trimmed.firstIndex(of: "="), trimmed[..<equals] == name else { continue }
                let value = String(trimmed[trimmed.index(after: equals)...])
                if value.utf8.count == 43, Base64URL.decode(value) != nil { return value }
            }
        }
        return nil
    }

    /// The `Set-Cookie` value.
    func header(_ value: String, maxAge: Int) -> String {
        "\(name)=\(value); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=Lax" + (secure ? "; Secure" : "")
    }
}
