import KeychainAPI
public import KeychainCore

/// What a provider granted for an authorization code: the tokens, and the scope it says it
/// granted (RFC 6749 §5.1: absent when it is the one asked for).
public struct AuthorizationCodeGrant: Sendable {
    public var tokens: TokenGrant
    public var scope: String?
}

extension TokenEndpointClient {
    /// Exchanges an authorization code (RFC 6749 §4.1.3) with its PKCE verifier (RFC 7636 §4.5),
    /// sending `redirectURI` exactly as the authorization request did, the client authenticated as
    /// `provider` says (Basic, in the body, or a public client's `client_id` alone). Under the
    /// outbound rules of every token endpoint call; no secret reaches a failure's text.
    public func exchangeCode(
        _ code: String, verifier: SecretBytes, redirectURI: String, provider: OAuthProvider
    ) throws(TokenExchangeFailure) -> AuthorizationCodeGrant {
        let codeBytes = SecretBytes(utf8: code, lockedInMemory: false)
        var form = FormBody()
        form.add("grant_type", "authorization_code")
        form.add("code", codeBytes)
        form.add("redirect_uri", redirectURI)
        form.add("code_verifier", verifier)
        let secret = provider.clientSecret ?? SecretBytes([UInt8](), lockedInMemory: false)
        var authorization: SecretBytes?
        switch provider.clientAuth {
        case .basic:
            authorization = FormBody.basicAuthorization(clientId: provider.clientId, clientSecret: secret)
        case .post:
            form.add("client_id", provider.clientId)
            form.add("client_secret", secret)
        case .none:
            form.add("client_id", provider.clientId)
        }
        let sent = [codeBytes, verifier, secret]
        let secrets = SentSecrets(sent + sent.map(FormBody.encoded) + [authorization].compactMap { $0 })
        do {
            let reply = try post(provider.tokenEndpoint, body: form.bytes, authorization: authorization)
            let read = TokenEndpointAnswer(status: reply.status, body: reply.body)
            return AuthorizationCodeGrant(tokens: try read.grant(), scope: read.grantedScope)
        } catch {
            throw secrets.screen(error)
        }
    }
}

extension TokenEndpointAnswer {
    /// The `scope` of a successful answer (RFC 6749 §5.1), printable ASCII only; nil when absent.
    var grantedScope: String? {
        guard let scope = (try? JSONValue.parse(body))?["scope"]?.stringValue, !scope.isEmpty else { return nil }
        let printable = scope.unicodeScalars.filter { (0x20...0x7E).contains($0.value) }.prefix(4096)
        return String(String.UnicodeScalarView(printable))
    }
}
