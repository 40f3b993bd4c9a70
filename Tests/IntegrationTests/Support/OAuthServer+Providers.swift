import Foundation
import KeychaindTesting
import Testing

/// What the provider tests use of `oauth_server.py`: its RFC 7009 revocation endpoint, the
/// revocations it received, a client secret rotated at the server, its public client, and the
/// provider set up on keychaind over it.
extension OAuthServer {
    static let publicClient = "public-client"

    var baseURL: String { "\(caFile == nil ? "http" : "https")://127.0.0.1:\(port)" }
    var revocationEndpoint: String { "\(baseURL)/revoke" }
    /// The authorization endpoint (`GET /authorize`, the connect tests' consent step).
    var authorizationEndpoint: String { "\(baseURL)/authorize" }

    struct Revocation: Equatable {
        var token: String
        var hint: String?
        /// The HTTP status /revoke answered.
        var status: Int
        /// Whether the token is revoked now.
        var revoked: Bool
    }

    /// Every /revoke request so far, in order.
    func revocations() throws -> [Revocation] {
        let answer = try call("GET", "/revocations", nil)
        return (answer["revocations"] as? [[String: Any]] ?? []).map {
            Revocation(
                token: $0["token"] as? String ?? "", hint: $0["hint"] as? String, status: $0["status"] as? Int ?? -1,
                revoked: $0["revoked"] as? Bool ?? false)
        }
    }

    /// The client's secret at the server from now on; the old one is refused.
    func rotateSecret(of clientId: String, to secret: String) throws {
        _ = try call("POST", "/clients/secret", ["clientId": clientId, "secret": secret])
    }

    /// Sets up provider `name` on `keychaind` over this server (as its admin), for `client`
    /// (`clientSecret` nil: a public client); answers the provider as keychaind answered it.
    @discardableResult
    func setUpProvider(
        _ name: String, on keychaind: any LoopbackKeychaind, clientId: String, clientSecret: String?, clientAuth: String,
        revocation: Bool = true
    ) throws -> [String: Any] {
        var body: [String: Any] = [
            "authorizationEndpoint": authorizationEndpoint, "tokenEndpoint": tokenEndpoint, "clientId": clientId,
            "clientAuth": clientAuth, "accessGroups": ["apps"],
        ]
        if let clientSecret { body["clientSecret"] = clientSecret }
        if revocation { body["revocationEndpoint"] = revocationEndpoint }
        let answer = try keychaind.client().json("PUT", "/v1/admin/providers/\(name)", body, token: try keychaind.adminToken())
        #expect(answer.status == 200, "\(answer.text)")
        if let clientSecret { #expect(!answer.text.contains(clientSecret)) }
        return answer.json
    }
}
