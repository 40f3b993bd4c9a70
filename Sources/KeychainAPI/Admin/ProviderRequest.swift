public import KeychainCore

/// The body of `PUT /v1/admin/providers/{name}` as an `OAuthProvider`: `authorizationEndpoint`,
/// `tokenEndpoint`, `clientId`, `accessGroups` (required), `clientSecret` (required unless
/// `clientAuth` is `none`, refused with it), `clientAuth` (`basic` default, `post`, `none`),
/// `scopes`, `allowedScopes`, `authorizationParams`, `revocationEndpoint`, `issuer`. Endpoints
/// follow the outbound URL rules (https, or http to loopback). Unknown keys, wrong types and
/// broken rules are errSecParam naming the key, never the secret.
public enum ProviderRequest {
    /// Bounds on what one provider holds.
    static let maximumScopes = 64
    static let maximumParameters = 32
    static let maximumTextBytes = 2048
    static let maximumSecretBytes = 4096

    public static func provider(named name: String, decoding body: JSONBody) throws -> OAuthProvider {
        guard OAuthProvider.isValidName(name) else {
            throw KeychainError.param("a provider's name is 1-128 of a-z, 0-9, \".\", \"_\" and \"-\" (not . or ..)")
        }
        try ItemArguments.rejectDuplicates(body.members) { $0.0 }
        var authorizationEndpoint: TokenEndpointURL?
        var tokenEndpoint: TokenEndpointURL?
        var clientId: String?
        var clientSecret: SecretBytes?
        var clientAuth = RefreshSetting.ClientAuth.basic
        var scopes: [String] = []
        var allowedScopes: [String]?
        var authorizationParams: [String: String] = [:]
        var revocationEndpoint: TokenEndpointURL?
        var issuer: String?
        var accessGroups: [String]?
        for (key, value) in body.members {
            switch key {
            case "authorizationEndpoint": authorizationEndpoint = try TokenEndpointURL(text(value, key: key), key: key)
            case "tokenEndpoint": tokenEndpoint = try TokenEndpointURL(text(value, key: key), key: key)
            case "revocationEndpoint": revocationEndpoint = try TokenEndpointURL(text(value, key: key), key: key)
            case "clientId": clientId = try text(value, key: key)
            case "clientSecret":
                guard case .string(let secret) = value, !secret.isEmpty, secret.utf8.count <= maximumSecretBytes else {
                    throw KeychainError.param("\"clientSecret\" must be a non-empty string of at most \(maximumSecretBytes) bytes")
                }
                clientSecret = SecretBytes(utf8: secret, lockedInMemory: false)
            case "clientAuth":
                guard case .string(let text) = value, let parsed = RefreshSetting.ClientAuth(rawValue: text) else {
                    throw KeychainError.param("\"clientAuth\" must be basic, post or none")
                }
                clientAuth = parsed
            case "scopes": scopes = try scopeList(value, key: key)
            case "allowedScopes": allowedScopes = try scopeList(value, key: key)
            case "authorizationParams": authorizationParams = try parameters(value)
            case "issuer": issuer = try text(value, key: key)
            case "accessGroups": accessGroups = try AccessGroupList.parse(value, key: key)
            default:
                throw KeychainError.param(
                    "unknown key \"\(key)\"; a provider takes authorizationEndpoint, tokenEndpoint, clientId, clientSecret, "
                        + "clientAuth, scopes, allowedScopes, authorizationParams, revocationEndpoint, issuer and accessGroups")
            }
        }
        guard let authorizationEndpoint else { throw KeychainError.param("\"authorizationEndpoint\" is required") }
        guard let tokenEndpoint else { throw KeychainError.param("\"tokenEndpoint\" is required") }
        guard let clientId else { throw KeychainError.param("\"clientId\" is required") }
        guard let accessGroups else { throw KeychainError.param("\"accessGroups\" is required") }
        let provider = OAuthProvider(
            name: name, authorizationEndpoint: authorizationEndpoint, tokenEndpoint: tokenEndpoint, clientId: clientId,
            clientSecret: clientSecret, clientAuth: clientAuth, scopes: scopes, allowedScopes: allowedScopes,
            authorizationParams: authorizationParams, revocationEndpoint: revocationEndpoint, issuer: issuer,
            accessGroups: accessGroups)
        try provider.validate()
        return provider
    }

    private static func text(_ value: JSONValue, key: String) throws -> String {
        guard case .string(let text) = value, !text.isEmpty, text.utf8.count <= maximumTextBytes else {
            throw KeychainError.param("\"\(key)\" must be a non-empty string of at most \(maximumTextBytes) bytes")
        }
        return text
    }

    /// An array of distinct RFC 6749 §3.3 scope tokens.
    private static func scopeList(_ value: JSONValue, key: String) throws -> [String] {
        guard case .array(let values) = value, values.count <= maximumScopes else {
            throw KeychainError.param("\"\(key)\" must be an array of at most \(maximumScopes) scopes")
        }
        let scopes = try values.map { value in
            guard case .string(let scope) = value, scope.utf8.count <= 256, OAuthProvider.isValidScope(scope) else {
                throw KeychainError.param(
                    "\"\(key)\" must hold scopes: non-empty strings of printable ASCII with no space, quote or backslash (RFC 6749 §3.3)")
            }
            return scope
        }
        guard Set(scopes).count == scopes.count else { throw KeychainError.param("\"\(key)\" names a scope twice") }
        return scopes
    }

    /// `{"name": "value", ...}`, strings only.
    private static func parameters(_ value: JSONValue) throws -> [String: String] {
        guard case .object(let members) = value, members.count <= maximumParameters else {
            throw KeychainError.param("\"authorizationParams\" must be an object of at most \(maximumParameters) string parameters")
        }
        var parameters: [String: String] = [:]
        for (name, value) in members {
            guard !name.isEmpty, name.utf8.count <= 256, case .string(let text) = value, text.utf8.count <= maximumTextBytes else {
                throw KeychainError.param(
                    "\"authorizationParams\" must map non-empty names to strings of at most \(maximumTextBytes) bytes")
            }
            guard parameters.updateValue(text, forKey: name) == nil else {
                throw KeychainError.param("\"authorizationParams\" names \"\(name)\" twice")
            }
        }
        return parameters
    }
}

/// The answers of the provider routes: `{"status":0,"provider":{…}}` and
/// `{"status":0,"providers":[…]}`. Never the client secret.
public enum ProviderAnswer: JSONAnswer {
    case provider(OAuthProvider)
    case providers([OAuthProvider])

    public func encoded() -> [UInt8] {
        JSONWriter.object(capacity: 1024) { answer in
            answer.member("status", 0)
            switch self {
            case .provider(let provider):
                answer.key("provider")
                answer.object { $0.provider(provider) }
            case .providers(let providers):
                answer.key("providers")
                answer.array { list in
                    for provider in providers { list.object { $0.provider(provider) } }
                }
            }
        }
    }
}

extension JSONWriter {
    /// A provider's members, never its client secret; `authorizationParams` by name.
    fileprivate mutating func provider(_ provider: OAuthProvider) {
        member("name", provider.name)
        member("authorizationEndpoint", provider.authorizationEndpoint.text)
        member("tokenEndpoint", provider.tokenEndpoint.text)
        member("clientId", provider.clientId)
        member("clientAuth", provider.clientAuth.rawValue)
        stringArray("scopes", provider.scopes)
        if let allowed = provider.allowedScopes { stringArray("allowedScopes", allowed) } else { member("allowedScopes", nil as String?) }
        key("authorizationParams")
        object { parameters in
            for (name, value) in provider.authorizationParams.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                parameters.key(name)
                parameters.string(value)
            }
        }
        member("revocationEndpoint", provider.revocationEndpoint?.text)
        member("issuer", provider.issuer)
        stringArray("accessGroups", provider.accessGroups)
    }

    fileprivate mutating func stringArray(_ name: StaticString, _ values: [String]) {
        key(name)
        array { list in
            for value in values { list.string(value) }
        }
    }
}
