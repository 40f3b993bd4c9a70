import Foundation
import KeychainAPI
import KeychainCore
import Testing
@testable import KeychainClient

/// The credentials from the environment (`KEYCHAIND_TOKEN`, or `KEYCHAIND_JWT_ROLE` with
/// `KEYCHAIND_JWT_FILE`), the JWT file's reading, and a login's lease on the monotonic clock.
struct ClientCredentialsTests {
    @Test func aTokenOrAJWTRoleWithItsFileAndNeverBoth() throws {
        let token = try KeychainClient.Configuration.fromEnvironment(["KEYCHAIND_TOKEN": "kc_test"])
        #expect(token.credentials == .token("kc_test") && token.token == "kc_test")
        let jwt = try KeychainClient.Configuration.fromEnvironment([
            "KEYCHAIND_JWT_ROLE": "payments", "KEYCHAIND_JWT_FILE": "/var/run/secrets/tokens/keychaind",
            "KEYCHAIND_TOKEN": "",
        ])
        #expect(jwt.credentials == .jwt(role: "payments", tokenFile: "/var/run/secrets/tokens/keychaind"))
        #expect(jwt.token == "")

        func refusal(_ environment: [String: String]) -> KeychainError? {
            do {
                _ = try KeychainClient.Configuration.fromEnvironment(environment)
                return nil
            } catch {
                return error as? KeychainError
            }
        }
        let both = refusal(["KEYCHAIND_TOKEN": "kc_test", "KEYCHAIND_JWT_ROLE": "payments", "KEYCHAIND_JWT_FILE": "/t"])
        #expect(both?.code == .param)
        #expect(both?.detail?.contains("KEYCHAIND_TOKEN") == true && both?.detail?.contains("KEYCHAIND_JWT_ROLE") == true)
        #expect(both?.detail?.contains("kc_test") == false)
        #expect(refusal(["KEYCHAIND_TOKEN": "kc_test", "KEYCHAIND_JWT_ROLE": "payments"])?.code == .param)
        let noFile = refusal(["KEYCHAIND_JWT_ROLE": "payments"])
        #expect(noFile?.code == .param && noFile?.detail?.contains("KEYCHAIND_JWT_FILE") == true)
        let noRole = refusal(["KEYCHAIND_JWT_FILE": "/t"])
        #expect(noRole?.code == .param && noRole?.detail?.contains("KEYCHAIND_JWT_ROLE") == true)
        let neither = refusal([:])
        #expect(neither?.code == .authFailed && neither?.detail?.contains("KEYCHAIND_TOKEN") == true)
    }

    @Test func theSourceCompatibleInitializerAndAClientWithJWTCredentials() throws {
        var configuration = KeychainClient.Configuration(baseURL: URL(string: "http://127.0.0.1:1")!, token: "kc_a")
        #expect(configuration.credentials == .token("kc_a"))
        configuration.credentials = .jwt(role: "payments", tokenFile: "/nowhere/jwt")
        // The file is read at each login, not when the client is made.
        let client = try KeychainClient(configuration: configuration)
        #expect(client.loginSession == LoginSessionStatus(logins: 0, renewals: 0, refusedRequests: 0, accessor: nil, secondsLeft: nil))
        #expect(try KeychainClient(baseURL: URL(string: "http://127.0.0.1:1")!, token: "kc_a").loginSession == nil)
        configuration.credentials = .jwt(role: "", tokenFile: "/nowhere/jwt")
        #expect(throws: KeychainError.self) { try KeychainClient(configuration: configuration) }
    }

    @Test func theJWTFileIsTrimmedAndErrorsNameThePathNeverTheContents() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("jwt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("token").path
        try Data("  eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln\n".utf8).write(to: URL(fileURLWithPath: file))
        #expect(try TokenSession.readJWT(file) == "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln")

        func failure(_ path: String) -> KeychainError? {
            do {
                _ = try TokenSession.readJWT(path)
                return nil
            } catch {
                return error as? KeychainError
            }
        }
        let missing = failure(directory.appendingPathComponent("missing").path)
        #expect(missing?.code == .authFailed && missing?.detail?.contains("missing: no such file") == true)
        #expect(failure(directory.path)?.detail?.contains("is a directory") == true)
        try Data("\n \n".utf8).write(to: URL(fileURLWithPath: file))
        #expect(failure(file)?.detail == "JWT file \(file): empty")
        try Data("secret-part\u{1}rest".utf8).write(to: URL(fileURLWithPath: file))
        let control = failure(file)
        #expect(control?.detail?.contains("control character") == true && control?.detail?.contains("secret-part") == false)
    }

    /// A 2-second token that renews up to 4 seconds after issue, answered with `ttl` 1 (the
    /// seconds left, rounded down): the lease is the 2 seconds `expiresAt − issuedAt` says, from
    /// when the login was sent, whatever the wall clock of either machine says.
    @Test func aLeaseIsCountedFromTheSendOnTheMonotonicClockFromServerDurationsOnly() throws {
        let sent = ContinuousClock.now
        // Server dates a year off this machine's clock: only their differences count.
        let login = try JSONValue.parse(
            Array(
                """
                {"token":"kc_x","accessor":"kca_1","issuedAt":"2001-01-01T00:00:00.000Z",
                 "expiresAt":"2001-01-01T00:00:02.000Z","maxExpiresAt":"2001-01-01T00:00:04.000Z","ttl":1}
                """.utf8))
        let lease = try Lease(answer: login, token: "kc_x", sent: sent)
        #expect(lease.expires == sent + .seconds(2) && lease.cap == sent + .seconds(4))
        #expect(lease.renewAt! == sent + .seconds(2) - .seconds(2) / 3)
        #expect(lease.usableUntil! == sent + .seconds(2) - .seconds(2) / 6)
        #expect(lease.renewalExtends && lease.accessor == "kca_1")

        // Renewed 1.5 s later: 2 s more, so 3.5 s from the login; a third of a lease from the cap.
        let renewal = try JSONValue.parse(
            Array(#"{"issuedAt":"2001-01-01T00:00:00.000Z","expiresAt":"2001-01-01T00:00:03.500Z","maxExpiresAt":"2001-01-01T00:00:04.000Z","ttl":1}"#.utf8))
        let renewed = try Lease(answer: renewal, token: "kc_x", sent: sent + .milliseconds(1500), renewing: lease)
        #expect(renewed.expires == sent + .milliseconds(3500) && renewed.cap == lease.cap && renewed.accessor == "kca_1")
        #expect(!renewed.renewalExtends)  // 0.5 s of headroom left: the next refresh is a login
        // At the cap a renewal answers the cap: not longer, so never later than the cap.
        let capped = try Lease(answer: renewal, token: "kc_x", sent: sent + .milliseconds(3000), renewing: renewed)
        #expect(capped.expires == lease.cap)

        // A token that never expires is never renewed.
        let forever = try Lease(
            answer: try JSONValue.parse(Array(#"{"token":"kc_y","ttl":null,"expiresAt":null}"#.utf8)), token: "kc_y",
            sent: sent)
        #expect(forever.expires == nil && forever.renewAt == nil && !forever.renewalExtends)
        #expect(throws: KeychainError.self) {
            try Lease(answer: try JSONValue.parse(Array(#"{"ttl":"soon"}"#.utf8)), token: "kc_z", sent: sent)
        }
    }
}
