import Foundation
import KeychaindTesting

/// The OpenID Connect issuer of `oidc_issuer.py` (discovery, a key set, JWTs signed by PyJWT:
/// a library independent of keychaind's verifier), started on loopback for one test and stopped
/// by its PID. Run with Debian's python3, which has PyJWT, cryptography and Flask
/// (`scripts/bootstrap --test`).
final class OIDCIssuer {
    /// The claims every minted token has unless the test says otherwise.
    static let subject = "system:serviceaccount:payments:api"
    static let audience = "keychaind"
    /// The kids of the keys it starts with, published: one per algorithm but `rsa`, which signs
    /// RS384, RS512 and PS256/384/512 and whose JWK has no `alg`.
    static let kids = ["rs256", "rsa", "es256", "es384", "eddsa"]
    /// Its keys that are not in its key set (`mint(key:)`, `publish(kid:)`): strays of each kind,
    /// and an RSA-1024 key (RS256) too small to trust.
    static let strayKids = ["stray-rsa", "stray-p256", "stray-p384", "stray-ed25519"]
    static let weakKid = "weak-rsa-1024"

    /// The `kid` header of a minted token.
    enum Kid {
        /// The signing key's kid.
        case signingKey
        /// No kid header.
        case omitted
        case value(String)
    }

    let process = Process()
    private(set) var port = 0
    /// The CA certificate the HTTPS server's certificate is verified with; nil for plain HTTP.
    let caFile: String?
    /// What follows host and port in the issuer URL, as given (a trailing `/` kept).
    let issuerPath: String

    /// `tls`: a certificate and key for 127.0.0.1 (its own CA), else plain HTTP. `issuerPath`:
    /// the issuer is the server's URL followed by it, e.g. `/tenant/` for a trailing slash.
    init(tls: (cert: String, key: String)? = nil, issuerPath: String = "") throws {
        caFile = tls?.cert
        self.issuerPath = issuerPath
        port = try LoopbackPythonServer.start(
            process, script: "oidc_issuer.py",
            arguments: ["--issuer-path", issuerPath] + (tls.map { ["--cert", $0.cert, "--key", $0.key] } ?? []))
    }

    private var origin: String { "\(caFile == nil ? "http" : "https")://127.0.0.1:\(port)" }
    /// The `iss` of its tokens, and what discovery claims unless told to lie.
    var issuer: String { origin + issuerPath }
    /// Where discovery is: the issuer with one trailing `/` removed, then the well-known path.
    var discoveryURL: String { (issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer) + "/.well-known/openid-configuration" }
    var jwksURL: String { (issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer) + "/jwks" }

    /// SIGTERM, then SIGKILL if it is still running after 5 seconds.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        if !waitUntil(timeout: 5, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }

    // MARK: - The control API

    /// A JWT signed by PyJWT: `claims` over the defaults (iss, sub, aud, iat, exp now + 300,
    /// `kubernetes.io` {namespace, serviceaccount {name}}) less `omit`; `headers` over PyJWT's
    /// (`["typ": NSNull()]` removes typ). `key`: the kid of the key that signs instead of the
    /// current key of `alg` (a stray or the weak key). The attacks: `alg` "none"; "HS256" (and
    /// 384, 512) with the PEM public key of `kid`'s key (default rs256) as HMAC secret;
    /// `embedJWK`, signed by an attacker's key whose public JWK is in the header, with the real kid.
    func mint(
        alg: String = "RS256", claims: [String: Any] = [:], omit: [String] = [], headers: [String: Any] = [:],
        kid: Kid = .signingKey, key: String? = nil, embedJWK: Bool = false
    ) throws -> String {
        var body: [String: Any] = ["alg": alg, "claims": claims, "omit": omit, "headers": headers, "embedJWK": embedJWK]
        switch kid {
        case .signingKey: break
        case .omitted: body["kid"] = NSNull()
        case .value(let value): body["kid"] = value
        }
        if let key { body["key"] = key }
        return try string(call("POST", "/mint", body), "jwt")
    }

    /// The SPKI PEM public key of the current key of `alg`, as a role's `publicKeys` takes it.
    func publicPEM(alg: String = "RS256") throws -> String {
        try request("GET", "/public-pem?alg=\(alg)", nil)
    }

    /// A new key (new kid) for the algorithms the current key of `alg` signs, published and used
    /// from now on; the old key stays in the key set if `keep`. Answers the new kid.
    func rotate(alg: String, keep: Bool = true) throws -> String {
        try string(call("POST", "/rotate", ["alg": alg, "keep": keep]), "kid")
    }

    /// Takes the key out of the key set (it can still sign through `mint(key:)`).
    func remove(kid: String) throws {
        _ = try call("POST", "/remove", ["kid": kid])
    }

    /// Puts the key into the key set.
    func publish(kid: String) throws {
        _ = try call("POST", "/publish", ["kid": kid])
    }

    /// The `alg` member of the key's JWK; nil leaves it out.
    func setJWKAlg(kid: String, alg: String?) throws {
        _ = try call("POST", "/jwk-alg", ["kid": kid, "alg": alg.map { $0 as Any } ?? NSNull()])
    }

    /// How /jwks answers from now on: `normal`, `error` (503), `slow` (after `delay` seconds),
    /// `garbage` (200, not JSON), `oversized` (a key set padded to `size` bytes); and the `issuer`
    /// discovery claims (nil: the real one).
    func control(
        jwks: String = "normal", delay: Double = 0, size: Int = 2 * 1024 * 1024, discoveryIssuer: String? = nil
    ) throws {
        _ = try call(
            "POST", "/control",
            ["jwks": jwks, "delay": delay, "size": size, "discoveryIssuer": discoveryIssuer.map { $0 as Any } ?? NSNull()])
    }

    /// Requests to /jwks and to discovery so far, whatever they were answered.
    func stats() throws -> (jwks: Int, discovery: Int) {
        let answer = try call("GET", "/stats", nil)
        return (answer["jwksRequests"] as? Int ?? -1, answer["discoveryRequests"] as? Int ?? -1)
    }

    /// What discovery answers.
    func discovery() throws -> [String: Any] {
        try call("GET", String(discoveryURL.dropFirst(origin.count)), nil)
    }

    /// The JWKs of the key set /jwks answers.
    func keySet() throws -> [[String: Any]] {
        guard let keys = try call("GET", String(jwksURL.dropFirst(origin.count)), nil)["keys"] as? [[String: Any]]
        else { throw ProcessFailure(description: "oidc_issuer: /jwks has no keys") }
        return keys
    }

    /// The text of a 2xx answer from the server.
    private func request(_ method: String, _ path: String, _ body: [String: Any]?) throws -> String {
        var arguments = ["curl", "-sS", "--fail", "--max-time", "10", "-X", method]
        if let caFile { arguments += ["--cacert", caFile] }
        if let body {
            let json = String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
            arguments += ["-H", "Content-Type: application/json", "--data", json]
        }
        arguments.append(origin + path)
        let result = try Command.run(arguments)
        guard result.status == 0 else { throw ProcessFailure(description: "oidc_issuer \(path): \(result.stderr)") }
        return result.stdout
    }

    /// The JSON object a 2xx answer holds.
    private func call(_ method: String, _ path: String, _ body: [String: Any]?) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(request(method, path, body).utf8)) as? [String: Any]
        else { throw ProcessFailure(description: "oidc_issuer \(path): not a JSON object") }
        return object
    }

    private func string(_ object: [String: Any], _ key: String) throws -> String {
        guard let value = object[key] as? String else { throw ProcessFailure(description: "oidc_issuer: no \(key)") }
        return value
    }
}
