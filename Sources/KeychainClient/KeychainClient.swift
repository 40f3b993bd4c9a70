import AsyncHTTPClient
public import Foundation
import KeychainAPI
import KeychainCore
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// Clients catch the server's errors as `KeychainError` without importing KeychainCore.
@_exported import struct KeychainCore.KeychainError

/// A client of keychaind: async calls for the token routes and the item routes, and the
/// synchronous `SecItem*` functions (see `SecItem.swift`) through `KeychainClient.shared`.
///
/// HTTP goes through AsyncHTTPClient (SwiftNIO, TLS by swift-nio-ssl/BoringSSL), on the
/// process-wide `MultiThreadedEventLoopGroup.singleton`. Every call is one request future on the
/// client's own `HTTPClient`, with a deadline of `timeout`: the async methods await it, the
/// synchronous ones block on it (`EventLoopFuture.wait()`). The request runs on NIO's event-loop
/// threads, so neither needs the calling thread nor Swift's cooperative pool to make progress,
/// and a synchronous call cannot deadlock from any thread that is not itself a NIO event loop
/// (there it throws instead of blocking the loop); it does block its thread for the duration of
/// the request, bounded by `timeout`.
///
/// Every error keychaind answers is thrown as the same `KeychainError` (status, name, message,
/// detail) the server raised. Transport failures (refused connection, TLS, timeout) are
/// errSecNotAvailable with a detail naming the server (`scheme://host:port`) and what happened;
/// never the token.
public final class KeychainClient: Sendable {
    public struct Configuration: Sendable {
        /// How the client authenticates.
        public enum Credentials: Sendable, Equatable {
            /// A bearer token (`kc_…`) presented as is: a client's token, made by an admin.
            case token(String)
            /// A workload login: the client logs in by itself with the JWT in `tokenFile` (a
            /// Kubernetes service-account token, a CI OIDC token) under the login role `role`
            /// (`POST /v1/auth/jwt/login`), reading the file afresh at each login, as platforms
            /// rotate it. It renews the token ahead of expiry on its monotonic clock, logs in
            /// again when a renewal reaches the role's `tokenMaxTTL` or a request is answered 401
            /// (retrying that request once), so no call presents an expired token.
            case jwt(role: String, tokenFile: String)
        }

        /// The server, e.g. `http://127.0.0.1:8420`. Routes are called under `/v1`. Plain `http`
        /// only to a loopback address or `localhost` (the client refuses it elsewhere); `https`
        /// anywhere.
        public var baseURL: URL
        /// How the client authenticates: a static token, or a JWT login.
        public var credentials: Credentials
        /// The client's static bearer token (`kc_…`); empty for JWT credentials. Setting it sets
        /// `credentials` to `.token`.
        public var token: String {
            get {
                if case .token(let token) = credentials { return token }
                return ""
            }
            set { credentials = .token(newValue) }
        }
        /// Per-request timeout in seconds (connecting, TLS, sending and the whole answer).
        public var timeout: TimeInterval
        /// TLS settings; see `TLS`.
        public var tls: TLS
        /// Keep each `getAuthorizationHeader` answer in this process for as long as keychaind
        /// says it stays fresh (until the token's `expiresAt − refreshBefore`), instead of asking
        /// on every call. Off by default: while a header is kept, new tokens stored by another
        /// process, or a token revoked on the server, reach this process only when it ends. A
        /// token with no expiry stored is never kept.
        public var cachesAuthorizationHeader: Bool

        public init(
            baseURL: URL, token: String, timeout: TimeInterval = 30, tls: TLS = TLS(),
            cachesAuthorizationHeader: Bool = false
        ) {
            self.init(
                baseURL: baseURL, credentials: .token(token), timeout: timeout, tls: tls,
                cachesAuthorizationHeader: cachesAuthorizationHeader)
        }

        public init(
            baseURL: URL, credentials: Credentials, timeout: TimeInterval = 30, tls: TLS = TLS(),
            cachesAuthorizationHeader: Bool = false
        ) {
            self.baseURL = baseURL
            self.credentials = credentials
            self.timeout = timeout
            self.tls = tls
            self.cachesAuthorizationHeader = cachesAuthorizationHeader
        }

        /// Reads `KEYCHAIND_URL` (default `http://127.0.0.1:8420`), the credentials: either
        /// `KEYCHAIND_TOKEN` (a static token) or `KEYCHAIND_JWT_ROLE` and `KEYCHAIND_JWT_FILE` (a
        /// login role and the path of the workload's JWT; see `Credentials.jwt`), never both,
        /// `KEYCHAIND_TIMEOUT` (seconds, default 30) and `KEYCHAIND_CA_FILE` (a PEM file of a CA
        /// to trust for an `https` URL, besides the system's; empty = none).
        public static func fromEnvironment(
            _ environment: [String: String] = ProcessInfo.processInfo.environment
        ) throws -> Configuration {
            let urlText = environment["KEYCHAIND_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? "http://127.0.0.1:8420"
            guard let url = URL(string: urlText), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw KeychainError.param("KEYCHAIND_URL is not an http(s) URL")
            }
            let credentials = try credentials(from: environment)
            var timeout: TimeInterval = 30
            if let text = environment["KEYCHAIND_TIMEOUT"] {
                guard let seconds = TimeInterval(text), seconds > 0 else {
                    throw KeychainError.param("KEYCHAIND_TIMEOUT must be a positive number of seconds")
                }
                timeout = seconds
            }
            let caFile = environment["KEYCHAIND_CA_FILE"].flatMap { $0.isEmpty ? nil : $0 }
            return Configuration(
                baseURL: url, credentials: credentials, timeout: timeout, tls: TLS(caCertificateFile: caFile))
        }

        /// `KEYCHAIND_TOKEN`, or `KEYCHAIND_JWT_ROLE` with `KEYCHAIND_JWT_FILE` (empty = unset).
        static func credentials(from environment: [String: String]) throws -> Credentials {
            func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
            let token = value("KEYCHAIND_TOKEN")
            let role = value("KEYCHAIND_JWT_ROLE")
            let file = value("KEYCHAIND_JWT_FILE")
            switch (token, role, file) {
            case (let token?, nil, nil):
                return .token(token)
            case (_?, _, _):
                throw KeychainError.param(
                    "KEYCHAIND_TOKEN and KEYCHAIND_JWT_ROLE/KEYCHAIND_JWT_FILE are both set: give a static token "
                        + "or a JWT login, not both")
            case (nil, let role?, let file?):
                return .jwt(role: role, tokenFile: file)
            case (nil, _?, nil):
                throw KeychainError.param("KEYCHAIND_JWT_ROLE is set without KEYCHAIND_JWT_FILE (the path of the JWT)")
            case (nil, nil, _?):
                throw KeychainError.param("KEYCHAIND_JWT_FILE is set without KEYCHAIND_JWT_ROLE (the login role)")
            case (nil, nil, nil):
                throw KeychainError.authFailed(
                    "KEYCHAIND_TOKEN is not set (nor KEYCHAIND_JWT_ROLE and KEYCHAIND_JWT_FILE)")
            }
        }
    }

    /// TLS options, used for an `https` base URL. The server's certificate is verified against the
    /// system's trust store (ca-certificates) and, when `caCertificateFile` is set, the CA
    /// certificates in that PEM file as well: the way to trust a server whose certificate a
    /// private CA signed. The host name (or IP address) of the URL must be in the certificate.
    public struct TLS: Sendable {
        /// PEM file of one or more CA certificates to trust in addition to the system's. Read when
        /// the client is created: a missing, unreadable or certificate-less file is errSecParam.
        public var caCertificateFile: String?
        public init(caCertificateFile: String? = nil) { self.caCertificateFile = caCertificateFile }
    }

    public let configuration: Configuration
    private let httpClient: HTTPClient
    private let timeoutAmount: TimeAmount
    /// Nil unless `configuration.cachesAuthorizationHeader`.
    let authorizationCache: AuthorizationHeaderCache?
    /// The credentials and, for a JWT login, the current token and its lease.
    let session: TokenSession

    public init(configuration: Configuration) throws {
        try Self.checkPlaintext(configuration.baseURL)
        // NIO counts nanoseconds in an Int64: a timeout must be positive and finite (≤ 10^9 s).
        guard configuration.timeout > 0, configuration.timeout <= 1e9 else {
            throw KeychainError.param("timeout must be a positive number of seconds (at most 10^9)")
        }
        switch configuration.credentials {
        case .token(let token):
            // Said here, without the token, rather than by a header validation error at each request.
            guard !token.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw KeychainError.param(
                    "the token holds a control character (a trailing newline?), which no HTTP header can carry")
            }
            session = TokenSession(.token(token))
        case .jwt(let role, let tokenFile):
            guard !role.isEmpty, !tokenFile.isEmpty else {
                throw KeychainError.param("JWT credentials need a login role and the path of the JWT file")
            }
            // The file is read at each login, not here: it may appear (or rotate) later.
            session = TokenSession(.jwt(role: role, tokenFile: tokenFile))
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        if let path = configuration.tls.caCertificateFile {
            tls.additionalTrustRoots = [.certificates(try Self.loadCACertificates(path))]
        }
        let timeoutAmount = TimeAmount.nanoseconds(Int64(configuration.timeout * 1e9))
        var httpConfiguration = HTTPClient.Configuration(
            tlsConfiguration: tls,
            // keychaind never redirects; not following one keeps the bearer token on this server.
            redirectConfiguration: .disallow,
            timeout: HTTPClient.Configuration.Timeout(connect: timeoutAmount, read: timeoutAmount))
        // A refused connection or an untrusted certificate fails the request at once, with its
        // reason, instead of being retried with backoff until the connect timeout: neither gets
        // better within one request.
        httpConfiguration.connectionPool.retryConnectionEstablishment = false
        // Idle keep-alive connections are closed by the client before keychaind's own idle
        // timeout (`limits.idleTimeoutSeconds`, 30 s by default) would close them under a request.
        httpConfiguration.connectionPool.idleTimeout = .seconds(15)
        self.configuration = configuration
        self.timeoutAmount = timeoutAmount
        authorizationCache = configuration.cachesAuthorizationHeader ? AuthorizationHeaderCache() : nil
        httpClient = HTTPClient(eventLoopGroup: .singletonMultiThreadedEventLoopGroup, configuration: httpConfiguration)
    }

    public convenience init(baseURL: URL, token: String, timeout: TimeInterval = 30) throws {
        try self.init(configuration: Configuration(baseURL: baseURL, token: token, timeout: timeout))
    }

    /// A client configured from `KEYCHAIND_URL`, `KEYCHAIND_TOKEN` (or `KEYCHAIND_JWT_ROLE` and
    /// `KEYCHAIND_JWT_FILE`), `KEYCHAIND_TIMEOUT`, `KEYCHAIND_CA_FILE`.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> KeychainClient {
        try KeychainClient(configuration: .fromEnvironment(environment))
    }

    /// With JWT credentials, what the client's login session has done (logins, renewals, 401s
    /// retried) and how long its token has left; nil for a static token. Never the token.
    public var loginSession: LoginSessionStatus? { session.status }

    /// An `HTTPClient` must be shut down before it is released: in a debug build AsyncHTTPClient
    /// stops the process when one is deinitialised running, in a release build its connection
    /// pool leaks. The callback form returns at once (it never blocks this thread, which may be
    /// anyone's, even an event loop's); the pending shutdown keeps the `HTTPClient` alive until it
    /// has closed its idle connections. No request can be in flight here: each holds the client.
    deinit { httpClient.shutdown { _ in } }

    /// The CA certificates of a PEM file, or errSecParam saying why there are none.
    private static func loadCACertificates(_ path: String) throws -> [NIOSSLCertificate] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw KeychainError.param("tls.caCertificateFile \(path): no such file")
        }
        guard !isDirectory.boolValue else {
            throw KeychainError.param("tls.caCertificateFile \(path): is a directory, not a PEM file")
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw KeychainError.param("tls.caCertificateFile \(path): not readable (permissions)")
        }
        do {
            return try NIOSSLCertificate.fromPEMFile(path)
        } catch {
            throw KeychainError.param(
                "tls.caCertificateFile \(path): no PEM certificate in it (or a damaged one); "
                    + "expected -----BEGIN CERTIFICATE----- blocks")
        }
    }

    // MARK: - The default client

    private static let sharedClient = Mutex<KeychainClient?>(nil)

    /// The client the synchronous `SecItem*` functions and `SecureStore()` use. Set it once at
    /// start-up; when it was never set, the first use configures it from the environment
    /// (`fromEnvironment()`), and a missing token makes those calls fail with errSecNotAvailable.
    public static var shared: KeychainClient? {
        get {
            sharedClient.withLock { client in
                if client == nil { client = try? KeychainClient.fromEnvironment() }
                return client
            }
        }
        set { sharedClient.withLock { $0 = newValue } }
    }

    /// `shared`, or errSecNotAvailable saying how to configure it.
    static func requireShared() throws -> KeychainClient {
        guard let client = shared else {
            throw KeychainError(
                .notAvailable,
                "no keychaind client: set KeychainClient.shared, or KEYCHAIND_URL and KEYCHAIND_TOKEN "
                    + "(or KEYCHAIND_JWT_ROLE and KEYCHAIND_JWT_FILE)")
        }
        return client
    }

    // MARK: - Requests

    /// One request to keychaind: `/v1` + `path` (segments already percent-encoded by the caller
    /// through `pathSegment`), the query string, an optional JSON body (a KeychainAPI request's
    /// encoding). Answers the parsed JSON body of a 2xx answer, for the caller to decode as the
    /// route's answer type; throws the server's `KeychainError` otherwise. Cancelling the calling
    /// task cancels the request.
    func send(_ method: String, _ path: String, query: [QueryParameter] = [], body: [UInt8]? = nil) async throws
        -> JSONValue
    {
        try await sendReadingHeaders(method, path, query: query, body: body).json
    }

    /// `send`, answering the answer's headers too (the token fetch reads how long it stays fresh).
    /// With JWT credentials, the token is the session's (a login or renewal awaited first when
    /// one is due), and a request answered 401 is sent once more after a new login.
    func sendReadingHeaders(
        _ method: String, _ path: String, query: [QueryParameter] = [], body: [UInt8]? = nil
    ) async throws -> (json: JSONValue, headers: HTTPHeaders) {
        var token = try await Self.resolve(session.step(self))
        var response = try await sendOnce(method, path, query: query, body: body, token: token)
        if response.status == .unauthorized, session.isLogin {
            token = try await Self.resolve(session.stepAfterRefusal(of: token, self))
            response = try await sendOnce(method, path, query: query, body: body, token: token)
        }
        return (try Self.decode(response), response.headers)
    }

    private static func resolve(_ step: TokenSession.Step) async throws -> String {
        switch step {
        case .use(let token): token
        case .wait(let future): try await future.get().token
        }
    }

    private func sendOnce(
        _ method: String, _ path: String, query: [QueryParameter], body: [UInt8]?, token: String
    ) async throws -> HTTPClient.Response {
        let request = try makeRequest(method, path, query: query, body: body, token: token)
        let task = execute(request)
        do {
            return try await withTaskCancellationHandler {
                try await task.futureResult.get()
            } onCancel: {
                task.cancel()
            }
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw transportError(error, request)
        }
    }

    /// The same request, blocking the calling thread until the answer (or the timeout). Safe from
    /// any thread but a SwiftNIO event loop's (AsyncHTTPClient's own, or a NIO server's), where
    /// blocking would stall or deadlock the loop: there it throws errSecNotAvailable at once.
    /// With JWT credentials it blocks on the session's login or renewal too, when one is due
    /// (the same future the async callers await), and retries once after a 401, as `send` does.
    func sendSynchronously(_ method: String, _ path: String, query: [QueryParameter] = [], body: [UInt8]? = nil)
        throws -> JSONValue
    {
        if MultiThreadedEventLoopGroup.currentEventLoop != nil {
            throw KeychainError(
                .notAvailable,
                "a synchronous keychaind call cannot run on a SwiftNIO event loop thread (it would block the loop); "
                    + "use the async API there")
        }
        var token = try Self.resolveSynchronously(session.step(self))
        var response = try sendOnceSynchronously(method, path, query: query, body: body, token: token)
        if response.status == .unauthorized, session.isLogin {
            token = try Self.resolveSynchronously(session.stepAfterRefusal(of: token, self))
            response = try sendOnceSynchronously(method, path, query: query, body: body, token: token)
        }
        return try Self.decode(response)
    }

    private static func resolveSynchronously(_ step: TokenSession.Step) throws -> String {
        switch step {
        case .use(let token): token
        // Bounded: the login's (and renewal's) request has the same deadline as any other.
        case .wait(let future): try future.wait().token
        }
    }

    private func sendOnceSynchronously(
        _ method: String, _ path: String, query: [QueryParameter], body: [UInt8]?, token: String
    ) throws -> HTTPClient.Response {
        let request = try makeRequest(method, path, query: query, body: body, token: token)
        do {
            // Bounded: the request's deadline (`timeout`) fails the future when it passes.
            return try execute(request).futureResult.wait()
        } catch {
            throw transportError(error, request)
        }
    }

    /// One request as a future, with `token` (nil: none, as a login), transport failures turned
    /// into errSecNotAvailable; for the session's logins and renewals, which run on NIO's threads.
    func perform(
        _ method: String, _ path: String, body: [UInt8]?, token: String?
    ) -> EventLoopFuture<HTTPClient.Response> {
        let request: HTTPClient.Request
        do {
            request = try makeRequest(method, path, query: [], body: body, token: token)
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        return execute(request).futureResult.flatMapErrorThrowing { error in
            throw self.transportError(error, request)
        }
    }

    /// An event loop of the client's group, for the session's futures.
    var eventLoop: any EventLoop { httpClient.eventLoopGroup.next() }

    /// The one transport both `send` and `sendSynchronously` use: the request on the client's
    /// `HTTPClient`, the whole answer collected, failed by AsyncHTTPClient when `timeout` passes.
    private func execute(_ request: HTTPClient.Request) -> HTTPClient.Task<HTTPClient.Response> {
        httpClient.execute(
            request: request, delegate: ResponseAccumulator(request: request), deadline: .now() + timeoutAmount)
    }

    private func makeRequest(
        _ method: String, _ path: String, query: [QueryParameter], body: [UInt8]?, token: String?
    ) throws -> HTTPClient.Request
    {
        var base = configuration.baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        var text = base + "/v1" + path
        if !query.isEmpty {
            text += "?" + query.map { "\(Self.encodeQuery($0.name))=\(Self.encodeQuery($0.value))" }.joined(separator: "&")
        }
        guard let url = URL(string: text) else { throw KeychainError.param("cannot build a URL for \(path)") }
        var headers = HTTPHeaders()
        if let token { headers.add(name: "Authorization", value: "Bearer \(token)") }
        headers.add(name: "Accept", value: "application/json")
        var requestBody: HTTPClient.Body?
        if let body {
            headers.add(name: "Content-Type", value: "application/json")
            requestBody = .bytes(body)
        }
        do {
            return try HTTPClient.Request(url: url, method: HTTPMethod(rawValue: method), headers: headers, body: requestBody)
        } catch {
            // The base URL has no http(s) scheme or no host.
            throw KeychainError(
                .notAvailable, "cannot reach \(Self.origin(of: configuration.baseURL)): \(Self.plainDescription(error))")
        }
    }

    static func decode(_ response: HTTPClient.Response) throws -> JSONValue {
        let bytes = response.body.map { Array($0.readableBytesView) } ?? []
        let json = bytes.isEmpty ? nil : try? JSONValue.parse(bytes)
        let status = response.status.code
        guard (200..<300).contains(status) else {
            if let json, let body = ErrorBody(decoding: json) { throw body.error }
            throw KeychainError(.io, "keychaind answered HTTP \(status) without an error body")
        }
        guard let json else { throw KeychainError(.decode, "keychaind answered HTTP \(status) without JSON") }
        return json
    }

    /// `scheme://host:port` of a URL, for error details (never its user, path or query).
    private static func origin(of url: URL) -> String {
        let scheme = url.scheme ?? "http"
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host ?? "?"):\(port)"
    }

    /// errSecNotAvailable for a request that got no HTTP answer, saying where and why.
    private func transportError(_ error: any Error, _ request: HTTPClient.Request) -> KeychainError {
        let origin = "\(request.useTLS ? "https" : "http")://\(request.host):\(request.port)"
        return KeychainError(.notAvailable, "cannot reach \(origin): \(describe(error, request))")
    }

    /// What happened, in words: the TLS verdicts spelled out, the rest as AsyncHTTPClient and
    /// SwiftNIO describe it (never with the request's headers, so never the token).
    private func describe(_ error: any Error, _ request: HTTPClient.Request) -> String {
        let trusted =
            configuration.tls.caCertificateFile.map { "the system's CAs and those in \($0)" }
            ?? "only the system's CAs; trust a private CA with tls.caCertificateFile or KEYCHAIND_CA_FILE"
        switch error {
        case let error as HTTPClientError
        where [.deadlineExceeded, .readTimeout, .writeTimeout, .connectTimeout, .tlsHandshakeTimeout,
               .getConnectionFromPoolTimeout].contains(error):
            return "no answer within \(configuration.timeout) s (\(error.shortDescription))"
        case let error as HTTPClientError where error == .remoteConnectionClosed:
            return "the server closed the connection without an answer"
                + (request.useTLS ? "" : " (if it serves HTTPS, use an https:// URL)")
        case NIOSSLError.handshakeFailed(let reason) where "\(reason)".contains("CERTIFICATE_VERIFY_FAILED"):
            return "TLS certificate verification failed: the server's certificate is not signed by a CA this "
                + "client trusts (\(trusted)), or is not valid now"
        case let error as NIOSSLExtraError where error == .failedToValidateHostname:
            return "TLS certificate verification failed: the server's certificate is not valid for \(request.host) "
                + "(its subjectAltName names other hosts)"
        case let error as NIOSSLError:
            return "TLS failed: \(error)"
        case let error as NIOConnectionError:
            let reasons = error.connectionErrors.map { Self.socketError($0.error) }
            return "cannot connect: " + (reasons.isEmpty ? ["\(error)"] : reasons).joined(separator: "; ")
        case let error as IOError:
            return "cannot connect: " + Self.socketError(error)
        default:
            return Self.plainDescription(error)
        }
    }

    /// An error's description, but only the short one of an `HTTPClientError`: its full one can
    /// carry associated values, such as the header values (the token) it found invalid.
    private static func plainDescription(_ error: any Error) -> String {
        (error as? HTTPClientError)?.shortDescription ?? "\(error)"
    }

    /// A socket error as the system words it, e.g. "Connection refused (errno 111)".
    private static func socketError(_ error: any Error) -> String {
        guard let error = error as? IOError else { return "\(error)" }
        return "\(String(cString: strerror(error.errnoCode))) (errno \(error.errnoCode))"
    }

    /// errSecParam for a plain `http` URL to a host that is not this machine: the bearer token
    /// and every secret would cross the network in clear. Loopback addresses (127.0.0.0/8, `::1`)
    /// and `localhost` may be plain, as keychaind itself allows (it listens elsewhere only with
    /// TLS, or behind a TLS-terminating proxy, which the client then reaches over `https`).
    static func checkPlaintext(_ url: URL) throws {
        guard url.scheme?.lowercased() == "http" else { return }
        let host = (url.host ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        guard !isLoopback(host) else { return }
        throw KeychainError.param(
            "plain http:// is refused to \(host.isEmpty ? "a URL without a host" : host), which is not a loopback address "
                + "or localhost: the token and secrets would cross the network in clear; use https://")
    }

    /// Whether `host` is `localhost` or a literal loopback address (IPv4 127.0.0.0/8, IPv6 `::1`
    /// or IPv4-mapped 127.0.0.0/8). Other names are not resolved: what they resolve to can change.
    static func isLoopback(_ host: String) -> Bool {
        if host.lowercased() == "localhost" { return true }
        var ipv4 = in_addr()
        if inet_pton(AF_INET, host, &ipv4) == 1 { return UInt32(bigEndian: ipv4.s_addr) >> 24 == 127 }
        var ipv6 = in6_addr()
        guard inet_pton(AF_INET6, host, &ipv6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: ipv6) { Array($0) }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
        return bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
    }

    /// A path segment, percent-encoded (`/`, `?`, `#`, `%` and the like escaped).
    static func pathSegment(_ text: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/;?#%")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    private static func encodeQuery(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }
}
