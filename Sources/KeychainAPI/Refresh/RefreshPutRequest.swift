public import KeychainCore

/// The body of `PUT /tokens/{service}/refresh`: `tokenEndpoint`, `grant`, `clientId`,
/// `clientSecret` (all required), `clientAuth`, `scope`, `audience`, `refreshBefore`.
public struct RefreshPutRequest: Sendable {
    public var setting: RefreshSetting

    public init(setting: RefreshSetting) {
        self.setting = setting
    }

    /// Decodes a body. Unknown keys, wrong types and a token endpoint keychaind may not call are
    /// errSecParam; details name the key, never the secret.
    public init(decoding body: JSONBody) throws {
        try ItemArguments.rejectDuplicates(body.members) { $0.0 }
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
                        + "clientAuth, scope, audience or refreshBefore")
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

    /// The body that decodes to this request (the client's side).
    public func encoded() -> [UInt8] {
        JSONWriter.object(capacity: 256) { body in
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
