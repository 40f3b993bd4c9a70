import Foundation
import KeychainAPI
@testable import KeychainClient
import NIOCore
import NIOPosix
import Testing
import KeychaindTesting

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
        // A "/" in a path segment stays %2F, and the server keeps it in the name (issue 40,
        // finding 10): the tokens of `a/b` (none), not another route.
        #expect(try await keychain.tokens(service: "a/b") == nil)
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
