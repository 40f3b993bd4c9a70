import Foundation
import KeychainAPI
@testable import KeychainClient
import NIOPosix
import Testing

/// A private CA made with the openssl CLI, and a server certificate it signed.
struct TestCA {
    let directory: URL
    /// The CA's certificate (PEM): what a client is given as `caCertificateFile`.
    let caFile: String
    /// The server's certificate (PEM) and key (0600), for KEYCHAIND_TLS_CERT_FILE / _KEY_FILE.
    let serverCert: String
    let serverKey: String

    /// A new CA (EC P-256, one day) and a server certificate for `subjectAltName` signed by it.
    static func make(name: String = "keychaind test CA", subjectAltName: String = "IP:127.0.0.1,DNS:localhost")
        throws -> TestCA
    {
        let directory = KeychaindProcess.temporaryDirectory()
        func path(_ file: String) -> String { directory.appendingPathComponent(file).path }
        try openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
            "-subj", "/CN=\(name)", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign", "-keyout", path("ca.key"), "-out", path("ca.pem"),
        ])
        try openssl([
            "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=keychaind",
            "-keyout", path("server.key"), "-out", path("server.csr"),
        ])
        try """
            basicConstraints = CA:FALSE
            keyUsage = critical,digitalSignature
            extendedKeyUsage = serverAuth
            subjectAltName = \(subjectAltName)

            """.write(toFile: path("server.ext"), atomically: true, encoding: .utf8)
        try openssl([
            "x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
            "-set_serial", "\(UInt32.random(in: 1...UInt32.max))", "-days", "1", "-extfile", path("server.ext"),
            "-out", path("server.pem"),
        ])
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path("server.key"))
        return TestCA(
            directory: directory, caFile: path("ca.pem"), serverCert: path("server.pem"), serverKey: path("server.key"))
    }

    private static func openssl(_ arguments: [String]) throws {
        let result = try Command.run(["openssl"] + arguments)
        guard result.status == 0 else { throw ProcessFailure(description: "openssl failed: \(result.stderr)") }
    }

    /// keychaind serving HTTPS with this CA's server certificate.
    func server() throws -> KeychaindProcess {
        try KeychaindProcess(environment: ["KEYCHAIND_TLS_CERT_FILE": serverCert, "KEYCHAIND_TLS_KEY_FILE": serverKey])
    }
}

/// KeychainClient over HTTPS against the real binary: a private CA as trust root
/// (`tls.caCertificateFile` / `KEYCHAIND_CA_FILE`), and the refusals without it.
@Suite(.serialized)
final class ClientTLSTests {
    let ca: TestCA
    let server: KeychaindProcess
    let admin: String

    init() throws {
        ca = try TestCA.make()
        server = try ca.server()
        admin = try server.adminToken()
    }

    deinit { server.stop() }

    func keychain(caFile: String?, host: String = "127.0.0.1", timeout: TimeInterval = 10) throws -> KeychainClient {
        try KeychainClient(
            configuration: .init(
                baseURL: URL(string: "https://\(host):\(server.port)")!, token: admin, timeout: timeout,
                tls: .init(caCertificateFile: caFile)))
    }

    /// The error a call threw, or nil.
    func failure(_ body: () async throws -> Void) async -> KeychainError? {
        do {
            try await body()
            return nil
        } catch {
            return error as? KeychainError
        }
    }

    func curl(_ path: String) throws -> Command.Result {
        try Command.run([
            "curl", "-sS", "--max-time", "10", "--cacert", ca.caFile, "-H", "Authorization: Bearer \(admin)",
            "https://127.0.0.1:\(server.port)\(path)",
        ])
    }

    @Test func aClientTrustingThePrivateCAFetchesABearerHeaderOverHTTPS() async throws {
        let keychain = try keychain(caFile: ca.caFile)
        #expect(try await keychain.getAuthorizationHeader(service: "tls.svc") == nil)
        try await keychain.saveTokens(service: "tls.svc", accessToken: "tls-access", refreshToken: "tls-refresh")
        #expect(try await keychain.getAuthorizationHeader(service: "tls.svc") == ["Authorization": "Bearer tls-access"])
        let tokens = try #require(try await keychain.tokens(service: "tls.svc"))
        #expect(tokens.accessToken == "tls-access" && tokens.refreshToken == "tls-refresh")
        // The server's error comes through TLS unchanged.
        let error = await failure { _ = try await keychain.send("PUT", "/tokens/tls.svc", body: JSONValue.object([]).serialized()) }
        #expect(error?.code == .param && error?.detail != nil)

        // The certificate's DNS name works as well as its IP address.
        let byName = try self.keychain(caFile: ca.caFile, host: "localhost")
        #expect(try await byName.getAuthorizationHeader(service: "tls.svc") == ["Authorization": "Bearer tls-access"])

        // KEYCHAIND_CA_FILE configures the same from the environment.
        let fromEnvironment = try KeychainClient.fromEnvironment([
            "KEYCHAIND_URL": "https://127.0.0.1:\(server.port)", "KEYCHAIND_TOKEN": admin,
            "KEYCHAIND_CA_FILE": ca.caFile,
        ])
        #expect(fromEnvironment.configuration.tls.caCertificateFile == ca.caFile)
        #expect(try await fromEnvironment.deleteTokens(service: "tls.svc") == 2)
        let none = try KeychainClient.Configuration.fromEnvironment(["KEYCHAIND_TOKEN": "t", "KEYCHAIND_CA_FILE": ""])
        #expect(none.tls.caCertificateFile == nil)
    }

    @Test func aSelfSignedCertificateIsItsOwnCA() async throws {
        // docs/operations.md's local setup: one self-signed certificate, given to the client too.
        let (cert, key) = try MetricsAndTLSTests.selfSignedCertificate()
        let server = try KeychaindProcess(environment: ["KEYCHAIND_TLS_CERT_FILE": cert, "KEYCHAIND_TLS_KEY_FILE": key])
        defer { server.stop() }
        let keychain = try KeychainClient.fromEnvironment([
            "KEYCHAIND_URL": "https://127.0.0.1:\(server.port)", "KEYCHAIND_TOKEN": try server.adminToken(),
            "KEYCHAIND_CA_FILE": cert,
        ])
        #expect(try await keychain.tokens(service: "self-signed") == nil)
    }

    @Test func synchronousCallsWorkOverHTTPS() throws {
        let keychain = try keychain(caFile: ca.caFile)
        let body: JSONValue = .object([
            ("service", .string("tls.sync")), ("account", .string("a")), ("data", .string(Data("s3".utf8).base64EncodedString())),
        ])
        _ = try keychain.sendSynchronously("POST", "/items/genericPassword", body: body.serialized())
        let answer = try keychain.sendSynchronously(
            "GET", "/items/genericPassword", query: queryParameters([("service", "tls.sync"), ("account", "a"), ("return", "data")]))
        #expect(answer["item"]?["value"]?.stringValue == "s3")
        _ = try keychain.sendSynchronously("DELETE", "/items/genericPassword", query: queryParameters([("service", "tls.sync")]))
    }

    @Test func withoutTheCATheServersCertificateIsNotTrusted() async throws {
        let keychain = try keychain(caFile: nil)
        let error = try #require(await failure { _ = try await keychain.tokens(service: "x") })
        #expect(error.code == .notAvailable)
        let detail = try #require(error.detail)
        #expect(detail.contains("https://127.0.0.1:\(server.port)"))
        #expect(detail.contains("certificate"))
        #expect(detail.contains("KEYCHAIND_CA_FILE"), "says how to trust a private CA")
        #expect(!detail.contains(admin))
        // The synchronous path maps it the same way.
        #expect(throws: error) { _ = try keychain.sendSynchronously("GET", "/tokens/x") }
    }

    @Test func aWrongCAIsNotTrustedEither() async throws {
        let other = try TestCA.make(name: "another CA")
        let keychain = try keychain(caFile: other.caFile)
        let error = try #require(await failure { _ = try await keychain.getAuthorizationHeader(service: "x") })
        #expect(error.code == .notAvailable)
        let detail = try #require(error.detail)
        #expect(detail.contains("127.0.0.1:\(server.port)"))
        #expect(detail.contains("certificate"))
        #expect(detail.contains(other.caFile), "names the CA it did trust")
        #expect(!detail.contains(admin))
        #expect(throws: error) { _ = try keychain.sendSynchronously("GET", "/tokens/x") }
    }

    @Test func aCertificateForAnotherHostIsRefused() async throws {
        let elsewhere = try TestCA.make(subjectAltName: "DNS:keychaind.example.org")
        let server = try elsewhere.server()
        defer { server.stop() }
        let keychain = try KeychainClient(
            configuration: .init(
                baseURL: URL(string: "https://127.0.0.1:\(server.port)")!, token: try server.adminToken(), timeout: 10,
                tls: .init(caCertificateFile: elsewhere.caFile)))
        let error = try #require(await failure { _ = try await keychain.tokens(service: "x") })
        #expect(error.code == .notAvailable)
        #expect(error.detail?.contains("certificate") == true)
        #expect(error.detail?.contains("127.0.0.1") == true)
    }

    @Test func aBadCAFileIsErrSecParamAtCreation() throws {
        let directory = KeychaindProcess.temporaryDirectory()
        let junk = directory.appendingPathComponent("junk.pem").path
        try "not a certificate\n".write(toFile: junk, atomically: true, encoding: .utf8)
        let cases: [(path: String, says: String)] = [
            (directory.appendingPathComponent("missing.pem").path, "no such file"),
            (directory.path, "directory"),
            (junk, "no PEM certificate"),
            (ca.serverKey, "no PEM certificate"),  // a private key is no certificate
        ]
        for (path, says) in cases {
            #expect {
                _ = try self.keychain(caFile: path)
            } throws: { error in
                guard let error = error as? KeychainError else { return false }
                return error.code == .param && error.detail?.contains(path) == true && error.detail?.contains(says) == true
            }
        }
        #expect(throws: KeychainError.self) {
            _ = try KeychainClient.fromEnvironment(["KEYCHAIND_TOKEN": "t", "KEYCHAIND_CA_FILE": junk])
        }
        // A timeout NIO cannot count is refused too.
        #expect(throws: KeychainError.param("timeout must be a positive number of seconds (at most 10^9)")) {
            _ = try self.keychain(caFile: nil, timeout: 0)
        }
    }

    @Test func plainHTTPToTheHTTPSServerIsNotAvailable() async throws {
        let keychain = try KeychainClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, token: admin, timeout: 10)
        let error = try #require(await failure { _ = try await keychain.tokens(service: "x") })
        #expect(error.code == .notAvailable)
        #expect(error.detail?.contains("http://127.0.0.1:\(server.port)") == true)
        #expect(error.detail?.contains(admin) == false)
    }

    @Test func pathsAndQueriesArePercentEncodedAsBefore() async throws {
        let keychain = try keychain(caFile: ca.caFile)
        let service = "svc a?b#c%d&e=f+g é"
        let user = "gus/x@naver.com&y=1 #z"
        try await keychain.saveTokens(service: service, user: user, accessToken: "pe-1", refreshToken: "pe-2")
        #expect(try await keychain.getAuthorizationHeader(service: service, user: user) == ["Authorization": "Bearer pe-1"])
        // Stored under exactly these names, as the server sees them (read back with curl).
        let listed = try curl("/v1/items/genericPassword?limit=all&return=attributes")
        let items = try #require(
            (try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])?["items"] as? [[String: Any]])
        let names = Set(items.map { "\($0["service"] as? String ?? "")|\($0["account"] as? String ?? "")" })
        #expect(names.contains("\(service).accessToken|\(user)"))
        #expect(names.contains("\(service).refreshToken|\(user)"))
        // A "/" in a path segment stays %2F: the server sees no route, not another path.
        let slash = await failure { _ = try await keychain.tokens(service: "a/b") }
        #expect(slash?.code == .unimplemented)
        #expect(try await keychain.deleteTokens(service: service, user: user) == 2)
    }

    @Test func aSynchronousCallOnAnEventLoopThrowsInsteadOfBlockingIt() throws {
        let keychain = try keychain(caFile: ca.caFile)
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        let error = try loop.submit { () -> KeychainError? in
            do {
                _ = try keychain.sendSynchronously("GET", "/tokens/x")
                return nil
            } catch {
                return error as? KeychainError
            }
        }.wait()
        #expect(error?.code == .notAvailable)
        #expect(error?.detail?.contains("event loop") == true)
    }

    @Test func releasedClientsShutDownTheirHTTPClient() async throws {
        // A released HTTPClient that was not shut down stops a debug build; these are released
        // after requests, idle connections open, and from several threads.
        let configuration = try keychain(caFile: ca.caFile).configuration
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<8 {
                group.addTask {
                    let keychain = try KeychainClient(configuration: configuration)
                    #expect(try await keychain.tokens(service: "released-\(index)") == nil)
                }
            }
            try await group.waitForAll()
        }
        #expect(try await keychain(caFile: ca.caFile).tokens(service: "still-fine") == nil)
    }
}

extension SecItemClientTests {
    /// The SecItem functions and SecureStore over HTTPS. Nested, so it is serialized with the
    /// other SecItem tests (`KeychainClient.shared` is process-wide); it puts the suite's own
    /// client back when done.
    @Suite(.serialized)
    final class OverHTTPS {
        @Test func secItemRoundTripThroughAPrivateCA() throws {
            let ca = try TestCA.make()
            let server = try ca.server()
            defer { server.stop() }
            let previous = KeychainClient.shared
            defer { KeychainClient.shared = previous }
            KeychainClient.shared = try KeychainClient(
                configuration: .init(
                    baseURL: URL(string: "https://127.0.0.1:\(server.port)")!, token: try server.adminToken(),
                    timeout: 10, tls: .init(caCertificateFile: ca.caFile)))

            let item: NSDictionary = [
                kSecClass: kSecClassGenericPassword, kSecAttrService: "tls.secitem", kSecAttrAccount: "me",
                kSecValueData: Data("over-tls".utf8),
            ]
            #expect(SecItemAdd(item, nil) == errSecSuccess)
            var result: AnyObject?
            let query: NSDictionary = [
                kSecClass: kSecClassGenericPassword, kSecAttrService: "tls.secitem", kSecAttrAccount: "me",
                kSecReturnData: kCFBooleanTrue!, kSecMatchLimit: kSecMatchLimitOne,
            ]
            #expect(SecItemCopyMatching(query, &result) == errSecSuccess)
            #expect(result as? Data == Data("over-tls".utf8))
            #expect(SecItemDelete([kSecClass: kSecClassGenericPassword, kSecAttrService: "tls.secitem"] as NSDictionary) == errSecSuccess)

            let store = SecureStore(secureStoreQueryable: GenericPasswordQueryable(service: "tls.store"))
            try store.setValue("pwd", for: "account")
            #expect(try store.getValue(for: "account") == "pwd")
            try store.removeAllValues()

            // Without the CA: errSecNotAvailable, the detail (lastSecItemError) says why.
            KeychainClient.shared = try KeychainClient(
                baseURL: URL(string: "https://127.0.0.1:\(server.port)")!, token: try server.adminToken(), timeout: 10)
            #expect(SecItemCopyMatching(query, &result) == errSecNotAvailable)
            #expect(KeychainClient.lastSecItemError?.detail?.contains("certificate") == true)
        }
    }
}

/// What KeychainClient puts on the wire, read by a one-shot loopback listener that answers `{}`.
@Suite
struct ClientRequestBytesTests {
    /// Listens on 127.0.0.1:0, accepts one connection (waiting at most 10 s), reads the request
    /// head and body, answers 200 `{}` and closes.
    final class OneShotListener: @unchecked Sendable {
        // @unchecked: `received` is written by the accepting thread before `done` is signalled
        // and read only after waiting for it.
        let port: UInt16
        private let descriptor: Int32
        private var received = ""
        private let done = DispatchSemaphore(value: 0)

        init() throws {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, length) == 0 && listen(descriptor, 1) == 0
                        && getsockname(descriptor, $0, &length) == 0
                }
            }
            guard descriptor >= 0, bound else {
                close(descriptor)
                throw ProcessFailure(description: "cannot listen on 127.0.0.1")
            }
            self.descriptor = descriptor
            port = UInt16(bigEndian: address.sin_port)
            Thread { [self] in serveOnce() }.start()
        }

        private func serveOnce() {
            defer {
                close(descriptor)
                done.signal()
            }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 10_000) == 1 else { return }
            let connection = accept(descriptor, nil, nil)
            guard connection >= 0 else { return }
            defer { close(connection) }
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var bytes = Data()
            var chunk = [UInt8](repeating: 0, count: 4096)
            // The head, then as many body bytes as Content-Length says.
            while true {
                if let end = bytes.range(of: Data("\r\n\r\n".utf8)) {
                    let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).lowercased()
                    let length = head.components(separatedBy: "\r\n").first { $0.hasPrefix("content-length:") }
                        .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                    if bytes.count - (end.upperBound - bytes.startIndex) >= length { break }
                }
                let count = recv(connection, &chunk, chunk.count, 0)
                guard count > 0 else { break }
                bytes.append(contentsOf: chunk[0..<count])
            }
            received = String(decoding: bytes, as: UTF8.self)
            let answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
            _ = answer.withCString { Foundation.send(connection, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        }

        /// The request as received (empty when none came within the 10 s).
        func request() -> String {
            done.wait()
            return received
        }
    }

    @Test func pathSegmentsAndQueryItemsArePercentEncodedAsBefore() async throws {
        let listener = try OneShotListener()
        let keychain = try KeychainClient(
            baseURL: URL(string: "http://127.0.0.1:\(listener.port)/")!, token: "kc_wire-test", timeout: 10)
        let service = "svc a?b#c%d&e=f+g é/"
        _ = try await keychain.send(
            "PUT", "/tokens/" + KeychainClient.pathSegment(service),
            query: queryParameters([("user", "gus/x@naver.com&y=1 #z"), ("accessGroup", "a+b")]),
            body: JSONValue.object([("accessToken", .string("at"))]).serialized())
        let request = listener.request()
        // The bytes the URLSession client sent: the path segment escaped but for `&=+` (allowed in
        // a path), each query key and value escaped to RFC 3986 unreserved characters.
        #expect(request.hasPrefix(
            "PUT /v1/tokens/svc%20a%3Fb%23c%25d&e=f+g%20%C3%A9%2F?user=gus%2Fx%40naver.com%26y%3D1%20%23z&accessGroup=a%2Bb HTTP/1.1\r\n"))
        let lines = request.components(separatedBy: "\r\n").map { $0.lowercased() }
        #expect(lines.contains("authorization: bearer kc_wire-test"))
        #expect(lines.contains("content-type: application/json"))
        #expect(lines.contains("accept: application/json"))
        #expect(request.hasSuffix("\r\n\r\n{\"accessToken\":\"at\"}"))
    }

    @Test func theSynchronousPathSendsTheSameRequest() throws {
        let listener = try OneShotListener()
        let keychain = try KeychainClient(
            baseURL: URL(string: "http://127.0.0.1:\(listener.port)")!, token: "kc_wire-test", timeout: 10)
        _ = try keychain.sendSynchronously(
            "GET", "/items/genericPassword", query: queryParameters([("service", "a b/c"), ("account", "ü;x")]))
        #expect(listener.request().hasPrefix(
            "GET /v1/items/genericPassword?service=a%20b%2Fc&account=%C3%BC%3Bx HTTP/1.1\r\n"))
    }
}

extension ClientRequestBytesTests {
    @Test func aClosedPortIsNotAvailableAtOnceNamingTheServer() async throws {
        let keychain = try KeychainClient(baseURL: URL(string: "http://127.0.0.1:9")!, token: "kc_secret-token", timeout: 10)
        for synchronous in [false, true] {
            do {
                if synchronous {
                    _ = try keychain.sendSynchronously("GET", "/health")
                } else {
                    _ = try await keychain.send("GET", "/health")
                }
                Issue.record("nothing listens on port 9")
            } catch let error as KeychainError {
                #expect(error.code == .notAvailable)
                #expect(error.detail?.hasPrefix("cannot reach http://127.0.0.1:9: ") == true)
                #expect(error.detail?.lowercased().contains("refused") == true)
                #expect(error.detail?.contains("kc_secret-token") == false)
            }
        }
    }
}

extension ClientRequestBytesTests {
    @Test func aTokenNoHeaderCanCarryIsRefusedAtCreationWithoutEchoingIt() throws {
        #expect {
            _ = try KeychainClient(baseURL: URL(string: "http://127.0.0.1:9")!, token: "kc_secret-token\n")
        } throws: { error in
            guard let error = error as? KeychainError else { return false }
            return error.code == .param && error.detail?.contains("newline") == true
                && error.detail?.contains("kc_secret") == false
        }
    }
}

/// A query string for the client's `send`, from name/value pairs.
func queryParameters(_ pairs: [(String, String)]) -> [QueryParameter] {
    pairs.map { QueryParameter(name: $0.0, value: $0.1) }
}
