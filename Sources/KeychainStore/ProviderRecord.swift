import Foundation
package import KeychainCore

/// An OAuth provider as both backends store it: everything but the client secret as JSON in
/// `settings`, the client secret sealed in its own column (bound to the provider's name; NULL
/// for a public client).
package enum ProviderRecord {
    /// The stored members; names as the admin route spells them.
    private struct Settings: Codable {
        var authorizationEndpoint: String
        var tokenEndpoint: String
        var clientId: String
        var clientAuth: String
        var scopes: [String]
        var allowedScopes: [String]?
        var authorizationParams: [String: String]
        var revocationEndpoint: String?
        var issuer: String?
        var accessGroups: [String]
    }

    package static func encode(_ provider: OAuthProvider) throws -> String {
        let settings = Settings(
            authorizationEndpoint: provider.authorizationEndpoint.text, tokenEndpoint: provider.tokenEndpoint.text,
            clientId: provider.clientId, clientAuth: provider.clientAuth.rawValue, scopes: provider.scopes,
            allowedScopes: provider.allowedScopes, authorizationParams: provider.authorizationParams,
            revocationEndpoint: provider.revocationEndpoint?.text, issuer: provider.issuer, accessGroups: provider.accessGroups)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(settings), as: UTF8.self)
    }

    /// The provider `name`'s row: its settings and its client secret, opened.
    package static func decode(name: String, settings json: String, clientSecret: SecretBytes?) throws -> OAuthProvider {
        guard let settings = try? JSONDecoder().decode(Settings.self, from: Data(json.utf8)),
            let clientAuth = RefreshSetting.ClientAuth(rawValue: settings.clientAuth),
            let authorizationEndpoint = try? TokenEndpointURL(settings.authorizationEndpoint, key: "authorizationEndpoint"),
            let tokenEndpoint = try? TokenEndpointURL(settings.tokenEndpoint),
            // nil: none stored; .some(nil): one that is no longer an outbound URL.
            settings.revocationEndpoint.map({ try? TokenEndpointURL($0, key: "revocationEndpoint") }) != .some(nil)
        else { throw KeychainError.decode("the stored provider \"\(name)\" is malformed") }
        let revocationEndpoint = settings.revocationEndpoint.flatMap { try? TokenEndpointURL($0, key: "revocationEndpoint") }
        return OAuthProvider(
            name: name, authorizationEndpoint: authorizationEndpoint, tokenEndpoint: tokenEndpoint, clientId: settings.clientId,
            clientSecret: clientSecret, clientAuth: clientAuth, scopes: settings.scopes, allowedScopes: settings.allowedScopes,
            authorizationParams: settings.authorizationParams, revocationEndpoint: revocationEndpoint, issuer: settings.issuer,
            accessGroups: settings.accessGroups)
    }
}
