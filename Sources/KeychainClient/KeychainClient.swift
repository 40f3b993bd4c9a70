import Foundation
import KeychainAPI
import KeychainCore
import Synchronization

/// Clients catch the server's errors as `KeychainError` without importing KeychainCore.
@_exported import struct KeychainCore.KeychainError

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A client of keychaind: async calls for the token routes and the item routes, and the
/// synchronous `SecItem*` functions (see `SecItem.swift`) through `KeychainClient.shared`.
///
/// HTTP goes through Foundation's `URLSession` (FoundationNetworking on Linux). Every call is
/// a completion-handler data task on the client's own session, whose delegate queue is a private
/// `OperationQueue`: the async methods resume a continuation from it, the synchronous ones wait
/// for it on a semaphore. Neither needs the calling thread nor Swift's cooperative pool to make
/// progress, so a synchronous call cannot deadlock, whatever thread it is made from (it does
/// block that thread for the duration of the request, bounded by `timeout`).
///
/// Every error keychaind answers is thrown as the same `KeychainError` (status, name, message,
/// detail) the server raised. Transport failures (refused connection, timeout) are
/// errSecNotAvailable with a detail saying what happened.
public final class KeychainClient: Sendable {
    public struct Configuration: Sendable {
        /// The server, e.g. `http://127.0.0.1:8420`. Routes are called under `/v1`.
        public var baseURL: URL
        /// The client's bearer token (`kc_…`).
        public var token: String
        /// Per-request timeout in seconds.
        public var timeout: TimeInterval
        /// TLS settings; see `TLS`.
        public var tls: TLS

        public init(baseURL: URL, token: String, timeout: TimeInterval = 30, tls: TLS = TLS()) {
            self.baseURL = baseURL
            self.token = token
            self.timeout = timeout
            self.tls = tls
        }

        /// Reads `KEYCHAIND_URL` (default `http://127.0.0.1:8420`), `KEYCHAIND_TOKEN` (required)
        /// and `KEYCHAIND_TIMEOUT` (seconds, default 30).
        public static func fromEnvironment(
            _ environment: [String: String] = ProcessInfo.processInfo.environment
        ) throws -> Configuration {
            let urlText = environment["KEYCHAIND_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? "http://127.0.0.1:8420"
            guard let url = URL(string: urlText), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw KeychainError.param("KEYCHAIND_URL is not an http(s) URL")
            }
            guard let token = environment["KEYCHAIND_TOKEN"], !token.isEmpty else {
                throw KeychainError.authFailed("KEYCHAIND_TOKEN is not set")
            }
            var timeout: TimeInterval = 30
            if let text = environment["KEYCHAIND_TIMEOUT"] {
                guard let seconds = TimeInterval(text), seconds > 0 else {
                    throw KeychainError.param("KEYCHAIND_TIMEOUT must be a positive number of seconds")
                }
                timeout = seconds
            }
            return Configuration(baseURL: url, token: token, timeout: timeout)
        }
    }

    /// TLS options. The server speaks plain HTTP today; for an `https` URL the system's trust
    /// store is used. A private CA (`caCertificateFile`) is part of the configuration so that
    /// callers can be written now, but is **not implemented yet**: URLSession on Linux exposes
    /// no way to add a trust anchor, so a client configured with one refuses to start
    /// (errSecUnimplemented) rather than silently trusting the system store instead.
    public struct TLS: Sendable {
        /// PEM file of a CA to trust in addition to the system's (pending).
        public var caCertificateFile: String?
        public init(caCertificateFile: String? = nil) { self.caCertificateFile = caCertificateFile }
    }

    public let configuration: Configuration
    private let session: URLSession

    public init(configuration: Configuration) throws {
        if configuration.tls.caCertificateFile != nil {
            throw KeychainError(.unimplemented, "a custom CA for TLS is not supported yet")
        }
        self.configuration = configuration
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.timeoutIntervalForRequest = configuration.timeout
        sessionConfiguration.timeoutIntervalForResource = configuration.timeout
        let queue = OperationQueue()
        queue.name = "KeychainClient"
        queue.maxConcurrentOperationCount = 4
        session = URLSession(configuration: sessionConfiguration, delegate: nil, delegateQueue: queue)
    }

    public convenience init(baseURL: URL, token: String, timeout: TimeInterval = 30) throws {
        try self.init(configuration: Configuration(baseURL: baseURL, token: token, timeout: timeout))
    }

    /// A client configured from `KEYCHAIND_URL`, `KEYCHAIND_TOKEN`, `KEYCHAIND_TIMEOUT`.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> KeychainClient {
        try KeychainClient(configuration: .fromEnvironment(environment))
    }

    deinit { session.finishTasksAndInvalidate() }

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
                .notAvailable, "no keychaind client: set KeychainClient.shared or KEYCHAIND_URL and KEYCHAIND_TOKEN")
        }
        return client
    }

    // MARK: - Requests

    /// One request to keychaind: `/v1` + `path` (segments already percent-encoded by the caller
    /// through `pathSegment`), query items, an optional JSON body. Answers the parsed JSON body
    /// of a 2xx answer; throws the server's `KeychainError` otherwise.
    func send(_ method: String, _ path: String, query: [(String, String)] = [], body: JSONValue? = nil) async throws
        -> JSONValue
    {
        let request = try makeRequest(method, path, query: query, body: body)
        let (data, response, error): (Data?, URLResponse?, (any Error)?) = await withCheckedContinuation { continuation in
            session.dataTask(with: request) { data, response, error in
                continuation.resume(returning: (data, response, error))
            }.resume()
        }
        return try Self.decode(data, response, error, url: request.url)
    }

    /// The same request, blocking the calling thread until the answer (or the timeout). Safe from
    /// any thread but this session's own delegate queue, which never runs caller code.
    func sendSynchronously(_ method: String, _ path: String, query: [(String, String)] = [], body: JSONValue? = nil)
        throws -> JSONValue
    {
        let request = try makeRequest(method, path, query: query, body: body)
        let box = Mutex<(Data?, URLResponse?, (any Error)?)?>(nil)
        let done = DispatchSemaphore(value: 0)
        session.dataTask(with: request) { data, response, error in
            box.withLock { $0 = (data, response, error) }
            done.signal()
        }.resume()
        // URLSession ends the task itself after `timeout`; the extra margin only guards against a
        // completion that never comes.
        guard done.wait(timeout: .now() + configuration.timeout + 5) == .success, let answer = box.withLock({ $0 })
        else {
            throw KeychainError(.notAvailable, "keychaind did not answer within \(configuration.timeout) s")
        }
        return try Self.decode(answer.0, answer.1, answer.2, url: request.url)
    }

    private func makeRequest(_ method: String, _ path: String, query: [(String, String)], body: JSONValue?) throws
        -> URLRequest
    {
        var base = configuration.baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        var text = base + "/v1" + path
        if !query.isEmpty {
            text += "?" + query.map { "\(Self.encodeQuery($0.0))=\(Self.encodeQuery($0.1))" }.joined(separator: "&")
        }
        guard let url = URL(string: text) else { throw KeychainError.param("cannot build a URL for \(path)") }
        var request = URLRequest(url: url, timeoutInterval: configuration.timeout)
        request.httpMethod = method
        request.setValue("Bearer \(configuration.token)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(body.serialized())
        }
        return request
    }

    private static func decode(_ data: Data?, _ response: URLResponse?, _ error: (any Error)?, url: URL?) throws
        -> JSONValue
    {
        if let error {
            let where_ = url.map { "\($0.scheme ?? "http")://\($0.host ?? "")\($0.port.map { ":\($0)" } ?? "")" } ?? "keychaind"
            throw KeychainError(.notAvailable, "cannot reach \(where_): \(error.localizedDescription)")
        }
        guard let http = response as? HTTPURLResponse else {
            throw KeychainError(.notAvailable, "keychaind gave no HTTP answer")
        }
        let bytes = [UInt8](data ?? Data())
        let json = bytes.isEmpty ? nil : try? JSONValue.parse(bytes)
        guard (200..<300).contains(http.statusCode) else {
            if let json, let error = KeychainError(errorBody: json) { throw error }
            throw KeychainError(.io, "keychaind answered HTTP \(http.statusCode) without an error body")
        }
        guard let json else { throw KeychainError(.decode, "keychaind answered HTTP \(http.statusCode) without JSON") }
        return json
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
