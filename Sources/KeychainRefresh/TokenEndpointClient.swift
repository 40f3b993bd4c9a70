internal import CCurl
public import KeychainCore
import KeychainAPI
import Foundation

/// Calls providers' token endpoints through libcurl (docs/decisions.md, "Outbound HTTP through
/// libcurl"): a form-encoded POST (RFC 6749 §6, §4.4) with the client authenticated by HTTP Basic
/// or in the body (§2.3.1); `https` verified against the system's CAs or `settings.caFile`,
/// plain `http` to loopback only; no redirects, no proxies, bounded time and answer size.
public final class TokenEndpointClient: TokenEndpoint {
    public let settings: OutboundHTTPSettings

    public init(settings: OutboundHTTPSettings = OutboundHTTPSettings()) {
        self.settings = settings
    }

    public func exchange(_ setting: RefreshSetting, refreshToken: SecretBytes?) throws(TokenExchangeFailure) -> TokenGrant {
        var form = FormBody()
        form.add("grant_type", setting.grant.rawValue)
        if setting.grant == .refreshToken {
            guard let refreshToken else { throw .refused(error: "invalid_grant", description: "no refresh token is stored") }
            form.add("refresh_token", refreshToken)
        }
        if let scope = setting.scope { form.add("scope", scope) }
        if let audience = setting.audience { form.add("audience", audience) }
        let secret = setting.clientAuth == .none ? nil : setting.clientSecret
        let authorization = Self.authenticate(&form, clientId: setting.clientId, secret: secret, as: setting.clientAuth)
        let sent = [refreshToken, secret].compactMap { $0 }
        let secrets = SentSecrets(sent + sent.map(FormBody.encoded) + [authorization].compactMap { $0 })
        do {
            let answer = try post(setting.tokenEndpoint, body: form.bytes, authorization: authorization)
            return try TokenEndpointAnswer(status: answer.status, body: answer.body, retryAfter: answer.retryAfter).grant()
        } catch {
            throw secrets.screen(error)
        }
    }

    /// RFC 7009: asks `provider`'s revocation endpoint to revoke `refreshToken`
    /// (`token_type_hint=refresh_token`), the client authenticated as for its token endpoint.
    /// HTTP 200 is success (RFC 7009 §2.2: also for a token the provider no longer knows).
    public func revoke(_ refreshToken: SecretBytes, at provider: OAuthProvider) throws(TokenExchangeFailure) {
        guard let endpoint = provider.revocationEndpoint else { return }
        var form = FormBody()
        form.add("token", refreshToken)
        form.add("token_type_hint", "refresh_token")
        let secret = provider.clientAuth == .none ? nil : provider.clientSecret
        let authorization = Self.authenticate(&form, clientId: provider.clientId, secret: secret, as: provider.clientAuth)
        let sent = [refreshToken, secret].compactMap { $0 }
        let secrets = SentSecrets(sent + sent.map(FormBody.encoded) + [authorization].compactMap { $0 })
        do throws(TokenExchangeFailure) {
            let answer = try post(endpoint, body: form.bytes, authorization: authorization)
            guard answer.status == 200 else {
                let error = (try? JSONValue.parse(answer.body))?["error"]?.stringValue
                if (400..<500).contains(answer.status), let error, !error.isEmpty {
                    throw .refused(error: error, description: nil)
                }
                throw .unavailable("the revocation endpoint answered HTTP \(answer.status)")
            }
        } catch {
            throw secrets.screen(error)
        }
    }

    /// Client authentication (RFC 6749 §2.3.1): the HTTP Basic credentials to send (`basic`),
    /// or `client_id` and `client_secret` added to `form` (`post`), or `client_id` alone (`none`,
    /// a public client).
    private static func authenticate(
        _ form: inout FormBody, clientId: String, secret: SecretBytes?, as clientAuth: RefreshSetting.ClientAuth
    ) -> SecretBytes? {
        switch (clientAuth, secret) {
        case (.basic, let secret?):
            return FormBody.basicAuthorization(clientId: clientId, clientSecret: secret)
        case (.post, let secret?):
            form.add("client_id", clientId)
            form.add("client_secret", secret)
        default:
            form.add("client_id", clientId)
        }
        return nil
    }

    /// One POST; the answer's status, body and `Retry-After`, or why there is none.
    func post(_ endpoint: TokenEndpointURL, body: SecretBytes, authorization: SecretBytes?) throws(TokenExchangeFailure)
        -> (status: Int, body: [UInt8], retryAfter: String?)
    {
        try transfer(endpoint, body: body, authorization: authorization, caPEM: nil, what: "the token endpoint")
    }

    /// One GET (an issuer's key set or discovery document), under the same rules; `caPEM`, when
    /// given, is the CA its https is verified against instead.
    public func get(_ url: TokenEndpointURL, caPEM: String?) throws(TokenExchangeFailure) -> (status: Int, body: [UInt8]) {
        let answer = try transfer(url, body: nil, authorization: nil, caPEM: caPEM, what: "the issuer")
        return (answer.status, answer.body)
    }

    /// One POST of a JSON body with `headers` (whole lines: a webhook's signature), under the
    /// same rules.
    public func postJSON(_ url: TokenEndpointURL, body: [UInt8], headers: [String]) throws(TokenExchangeFailure)
        -> (status: Int, body: [UInt8])
    {
        let answer = try transfer(
            url, body: SecretBytes(body, lockedInMemory: false), authorization: nil, caPEM: nil, what: "the webhook receiver",
            contentType: "application/json", headers: headers)
        return (answer.status, answer.body)
    }

    /// A POST of `body` (a GET without), as the type's comment says; `what` names the far end in
    /// failures.
    private func transfer(
        _ endpoint: TokenEndpointURL, body: SecretBytes?, authorization: SecretBytes?, caPEM: String?, what: String,
        contentType: String = "application/x-www-form-urlencoded", headers extraHeaders: [String] = []
    ) throws(TokenExchangeFailure) -> (status: Int, body: [UInt8], retryAfter: String?) {
        _ = CurlGlobal.initialised
        // The host and port as libcurl itself reads the URL: what it connects to is what is checked.
        let (host, port) = Self.hostAndPort(endpoint.text)
        guard endpoint.isHTTPS || TokenEndpointURL.isLoopback(host) else {
            throw .unavailable("plain http is allowed to loopback addresses only")
        }
        guard let handle = curl_easy_init() else { throw .unavailable("libcurl could not start a transfer") }
        defer { curl_easy_cleanup(handle) }
        let answer = AnswerBuffer(limit: settings.maximumAnswerBytes)
        let context = Unmanaged.passRetained(answer)
        defer { context.release() }

        var headers: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headers) }
        // `localhost` is never looked up: no resolver (or /etc/hosts) can send it elsewhere.
        var pinned: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(pinned) }
        if host.lowercased() == "localhost" {
            pinned = curl_slist_append(nil, "\(host):\(port):127.0.0.1,[::1]")
        }
        if body != nil { headers = curl_slist_append(headers, "Content-Type: \(contentType)") }
        headers = curl_slist_append(headers, "Accept: application/json")
        for line in extraHeaders { headers = curl_slist_append(headers, line) }
        if let authorization {
            // libcurl copies the line; the copy is freed with the list (it cannot be wiped there).
            authorization.withUnsafeBytes { raw in
                var line = Array("Authorization: ".utf8) + raw
                line.append(0)
                line.withUnsafeBufferPointer { headers = curl_slist_append(headers, UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self)) }
                SecretBytes.wipe(&line)
            }
        }

        var caBlob = Array((caPEM ?? "").utf8)
        let code: CURLcode = (body ?? SecretBytes([UInt8](), lockedInMemory: false)).withUnsafeBytes { raw in
            var failed = CURLE_OK
            func set(_ result: CURLcode) { if failed == CURLE_OK { failed = result } }
            set(CCurl_setopt_string(handle, CURLOPT_URL, endpoint.text))
            set(CCurl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, endpoint.isHTTPS ? "https" : "http"))
            set(CCurl_setopt_string(handle, CURLOPT_PROXY, ""))
            set(CCurl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0))
            set(CCurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1))
            set(CCurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, settings.connectTimeoutMilliseconds))
            set(CCurl_setopt_long(handle, CURLOPT_TIMEOUT_MS, settings.timeoutMilliseconds))
            set(CCurl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1))
            set(CCurl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2))
            if caPEM != nil {
                set(caBlob.withUnsafeMutableBytes { CCurl_setopt_ca_blob(handle, $0.baseAddress, $0.count) })
            } else if let caFile = settings.caFile {
                set(CCurl_setopt_string(handle, CURLOPT_CAINFO, caFile))
            }
            set(CCurl_setopt_long(handle, CURLOPT_MAXFILESIZE, settings.maximumAnswerBytes))
            set(CCurl_setopt_string(handle, CURLOPT_USERAGENT, "keychaind/\(KeychaindVersion.current)"))
            set(CCurl_setopt_headers(handle, headers))
            if let pinned { set(CCurl_setopt_resolve(handle, pinned)) }
            if body != nil {
                set(CCurl_setopt_long(handle, CURLOPT_POST, 1))
                set(CCurl_setopt_pointer(handle, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: raw.baseAddress)))
                set(CCurl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, raw.count))
            }
            set(CCurl_setopt_write_function(handle, AnswerBuffer.write))
            set(CCurl_setopt_pointer(handle, CURLOPT_WRITEDATA, context.toOpaque()))
            guard failed == CURLE_OK else { return failed }
            return curl_easy_perform(handle)
        }
        if answer.overflowed || code == CURLE_FILESIZE_EXCEEDED {
            throw .unavailable("\(what)'s answer is larger than \(settings.maximumAnswerBytes) bytes")
        }
        guard code == CURLE_OK else {
            throw .unavailable("calling \(what) failed: \(String(cString: curl_easy_strerror(code)))")
        }
        var status = 0
        _ = CCurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        var retryAfter: UnsafeMutablePointer<curl_header>?
        let retryAfterValue = curl_easy_header(handle, "Retry-After", 0, UInt32(CURLH_HEADER), -1, &retryAfter) == CURLHE_OK
            ? retryAfter.map { String(cString: $0.pointee.value) } : nil
        return (status, answer.bytes, retryAfterValue)
    }
}

extension TokenEndpointClient {
    /// The host (IPv6 without brackets) and port of `url` as libcurl's URL parser reads them; an
    /// empty host when it cannot.
    static func hostAndPort(_ url: String) -> (host: String, port: Int) {
        guard let parsed = curl_url() else { return ("", 0) }
        defer { curl_url_cleanup(parsed) }
        guard curl_url_set(parsed, CURLUPART_URL, url, 0) == CURLUE_OK else { return ("", 0) }
        func part(_ which: CURLUPart, _ flags: UInt32) -> String? {
            var text: UnsafeMutablePointer<CChar>?
            guard curl_url_get(parsed, which, &text, flags) == CURLUE_OK, let text else { return nil }
            defer { curl_free(text) }
            return String(cString: text)
        }
        var host = part(CURLUPART_HOST, 0) ?? ""
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host, part(CURLUPART_PORT, UInt32(CURLU_DEFAULT_PORT)).flatMap { Int($0) } ?? 0)
    }
}

/// libcurl's process-wide setup, done once before the first transfer.
private enum CurlGlobal {
    static let initialised: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
}

/// Collects an answer up to `limit` bytes; libcurl's write callback stops the transfer past it.
private final class AnswerBuffer {
    var bytes: [UInt8] = []
    let limit: Int
    var overflowed = false

    init(limit: Int) { self.limit = limit }

    static let write: CCurl_write_function = { data, size, count, context in
        let buffer = Unmanaged<AnswerBuffer>.fromOpaque(context!).takeUnretainedValue()
        let length = size * count
        guard buffer.bytes.count + length <= buffer.limit else {
            buffer.overflowed = true
            return 0
        }
        if let data { buffer.bytes.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length)) }
        return length
    }
}
