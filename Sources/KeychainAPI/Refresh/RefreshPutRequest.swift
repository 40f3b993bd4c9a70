public import KeychainCore

/// The body of `PUT /tokens/{service}/refresh`: `tokenEndpoint`, `grant`, `clientId`,
/// `clientSecret` (all required), `clientAuth`, `scope`, `audience`, `refreshBefore`; or a
/// setting that names a provider: `provider` (required), `grant` (default `refresh_token`),
/// `scope`, `refreshBefore`, and none of the endpoint and client members (the provider's).
public struct RefreshPutRequest: Sendable {
    public var setting: RefreshSetting

    public init(setting: RefreshSetting) {
        self.setting = setting
    }

    /// The members a setting that names a provider takes from it.
    static let providersMembers = ["tokenEndpoint", "clientId", "clientSecret", "clientAuth", "audience"]

    /// Decodes a body; `provider(name)` is the provider of that name, nil when there is none.
    /// Unknown keys, wrong types, a token endpoint keychaind may not call, a provider that is not
    /// set up, and a provider given with endpoint or client members are errSecParam; details name
    /// the key, never the secret.
    public init(decoding body: JSONBody, provider: (String) throws -> OAuthProvider?) throws {
        try ItemArguments.rejectDuplicates(body.members) { $0.0 }
        if let named = body.members.first(where: { $0.0 == "provider" })?.1 {
            setting = try Self.namingProvider(named, body: body, provider: provider)
            return
        }
        var endpoint: TokenEndpointURL?
        var grant: RefreshSetting.Grant?
        var clientId: String?
        var clientSecret: SecretBytes?
        var clientAuth = RefreshSetting.ClientAuth.basic
        var scope: String?
        var audience: String?
        var refreshBefore = RefreshSetting.defaultRefreshBefore
        for (name, value) in body.members {
            switch name {
            case "tokenEndpoint":
                guard case .string(let text) = value else { throw KeychainError.param("\"tokenEndpoint\" must be a string") }
                endpoint = try TokenEndpointURL(text)
            case "grant":
                guard case .string(let text) = value, let parsed = RefreshSetting.Grant(rawValue: text) else {
                    throw KeychainError.param("\"grant\" must be refresh_token or client_credentials")
                }
                grant = parsed
            case "clientId":
                guard case .string(let text) = value, !text.isEmpty else {
                    throw KeychainError.param("\"clientId\" must be a non-empty string")
                }
                clientId = text
            case "clientSecret":
                guard case .string(let text) = value, !text.isEmpty else {
                    throw KeychainError.param("\"clientSecret\" must be a non-empty string")
                }
                clientSecret = SecretBytes(utf8: text, lockedInMemory: false)
            case "clientAuth":
                guard case .string(let text) = value, let parsed = RefreshSetting.ClientAuth(rawValue: text), parsed != .none else {
                    throw KeychainError.param("\"clientAuth\" must be basic or post")
                }
                clientAuth = parsed
            case "scope", "audience":
                guard case .string(let text) = value, !text.isEmpty else {
                    throw KeychainError.param("\"\(name)\" must be a non-empty string")
                }
                if name == "scope" { scope = text } else { audience = text }
            case "refreshBefore":
                guard case .integer(let seconds) = value, seconds >= 0, seconds <= RefreshSetting.maximumRefreshBefore else {
                    throw KeychainError.param(
                        "\"refreshBefore\" must be a whole number of seconds from 0 to \(RefreshSetting.maximumRefreshBefore)")
                }
                refreshBefore = Int(seconds)
            default:
                throw KeychainError.param(
                    "unknown key \"\(name)\"; a refresh setting takes tokenEndpoint, grant, clientId, clientSecret, "
                        + "clientAuth, scope, audience or refreshBefore, or provider")
            }
        }
        guard let endpoint else { throw KeychainError.param("the body needs \"tokenEndpoint\"") }
        guard let grant else { throw KeychainError.param("the body needs \"grant\"") }
        guard let clientId else { throw KeychainError.param("the body needs \"clientId\"") }
        guard let clientSecret else { throw KeychainError.param("the body needs \"clientSecret\"") }
        setting = RefreshSetting(
            tokenEndpoint: endpoint, grant: grant, clientId: clientId, clientSecret: clientSecret,
            clientAuth: clientAuth, scope: scope, audience: audience, refreshBefore: refreshBefore)
    }

    /// A setting that names the provider `value`: `grant`, `scope` and `refreshBefore` beside it.
    private static func namingProvider(
        _ value: JSONValue, body: JSONBody, provider: (String) throws -> OAuthProvider?
    ) throws -> RefreshSetting {
        guard case .string(let name) = value, !name.isEmpty else { throw KeychainError.param("\"provider\" must be a non-empty string") }
        var grant = RefreshSetting.Grant.refreshToken
        var scope: String?
        var refreshBefore = RefreshSetting.defaultRefreshBefore
        for (key, value) in body.members {
            switch key {
            case "provider":
                break
            case "grant":
                guard case .string(let text) = value, let parsed = RefreshSetting.Grant(rawValue: text) else {
                    throw KeychainError.param("\"grant\" must be refresh_token or client_credentials")
                }
                grant = parsed
            case "scope":
                guard case .string(let text) = value, !text.isEmpty else { throw KeychainError.param("\"scope\" must be a non-empty string") }
                scope = text
            case "refreshBefore":
                guard case .integer(let seconds) = value, seconds >= 0, seconds <= RefreshSetting.maximumRefreshBefore else {
                    throw KeychainError.param(
                        "\"refreshBefore\" must be a whole number of seconds from 0 to \(RefreshSetting.maximumRefreshBefore)")
                }
                refreshBefore = Int(seconds)
            case _ where providersMembers.contains(key):
                throw KeychainError.param(
                    "\"\(key)\" is the provider's: a setting names a provider or gives its own endpoint and client, not both")
            default:
                throw KeychainError.param(
                    "unknown key \"\(key)\"; a refresh setting that names a provider takes grant, scope and refreshBefore beside it")
            }
        }
        guard let found = try provider(name) else { throw KeychainError.param("no provider named \"\(name)\" is set up") }
        return RefreshSetting(provider: found, grant: grant, scope: scope, refreshBefore: refreshBefore)
    }

    /// The body that decodes to this request (the client's side).
    public func encoded() -> [UInt8] {
        if let provider = setting.provider {
            return JSONWriter.object(capacity: 128) { body in
                body.member("provider", provider)
                body.member("grant", setting.grant.rawValue)
                if let scope = setting.scope { body.member("scope", scope) }
                body.member("refreshBefore", setting.refreshBefore)
            }
        }
        return JSONWriter.object(capacity: 256) { body in
            body.member("tokenEndpoint", setting.tokenEndpoint.text)
            body.member("grant", setting.grant.rawValue)
            body.member("clientId", setting.clientId)
            body.key("clientSecret")
            setting.clientSecret.withUnsafeBytes { body.string(utf8: $0.bindMemory(to: UInt8.self)) }
            body.member("clientAuth", setting.clientAuth.rawValue)
            if let scope = setting.scope { body.member("scope", scope) }
            if let audience = setting.audience { body.member("audience", audience) }
            body.member("refreshBefore", setting.refreshBefore)
        }
    }
}
