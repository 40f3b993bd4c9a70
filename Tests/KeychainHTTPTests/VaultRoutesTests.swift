import Foundation
import KeychainAPI
import KeychainCore
import KeychainHTTP
import KeychainTestSupport
import Logging
import Synchronization
import Testing

/// A `VaultAdministration` that records calls; `unlock` fails while `wrongKey` is set.
final class FakeVault: VaultAdministration {
    struct State {
        var locked = false
        var wrongKey = false
        var term: UInt32 = 1
        var calls: [String] = []
    }
    let state = Mutex(State())

    var isLocked: Bool { state.withLock { $0.locked } }
    func lock() { state.withLock { $0.locked = true; $0.calls.append("lock") } }
    func unlock() throws {
        try state.withLock { state in
            state.calls.append("unlock")
            if state.wrongKey { throw KeychainError.authFailed("wrong master key") }
            state.locked = false
        }
    }
    func rotate(reencrypt: Bool) throws -> UInt32 {
        try state.withLock { state in
            if state.locked { throw KeychainError.interactionNotAllowed("locked") }
            state.term += 1
            state.calls.append("rotate reencrypt=\(reencrypt)")
            return state.term
        }
    }
    func rekey() throws -> Int {
        try state.withLock { state in
            if state.locked { throw KeychainError.interactionNotAllowed("locked") }
            state.calls.append("rekey")
            return Int(state.term)
        }
    }
    /// "KEYCHAIND-BACKUP" in a file that is unlinked once open, as `Vault` hands its backup.
    func backupFile() throws -> ReadOnlyFile {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fake-\(UUID().uuidString).backup").path
        try Data("KEYCHAIND-BACKUP".utf8).write(to: URL(fileURLWithPath: path))
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        unlink(path)
        return ReadOnlyFile(descriptor: descriptor, size: 16)
    }
    var status: VaultStatus {
        state.withLock {
            VaultStatus(
                locked: $0.locked, currentTerm: $0.term, currentTermEncryptions: 5, termCount: Int($0.term),
                reencryption: ReencryptionProgress(state: .running, targetTerm: $0.term, total: 10, done: 4))
        }
    }
}

@Suite("Vault admin routes in process")
struct VaultRoutesTests {
    let vault = FakeVault()
    let application: KeychainApplication
    let admin: String
    let client: String

    init() throws {
        let clients = InMemoryClientStore()
        let tokens = TestTokenIssuer()
        var router = Router()
        let vault = self.vault
        router.addServiceRoutes(isLocked: { vault.isLocked })
        router.addVaultRoutes(vault: vault)
        application = KeychainApplication(
            router: router, authenticator: Authenticator(clients: clients, tokens: tokens),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        let (adminToken, adminHash) = tokens.newToken()
        try clients.addClient(Client(name: "root", accessGroups: ["root"], role: .admin, createdAt: Date()), tokenHash: adminHash)
        let (clientToken, clientHash) = tokens.newToken()
        try clients.addClient(Client(name: "app", accessGroups: ["app"], role: .client, createdAt: Date()), tokenHash: clientHash)
        admin = adminToken
        client = clientToken
    }

    func send(_ method: HTTPMethod, _ path: String, query: [HTTPRequest.QueryItem] = [], token: String?, body: String = "")
        -> HTTPResponse
    {
        var headers: [(name: String, value: String)] = []
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        return application.respond(to: HTTPRequest(
            method: method, path: path, queryItems: query, headers: headers, body: Array(body.utf8)))
    }

    func json(_ response: HTTPResponse) -> JSONValue { (try? JSONValue.parse(response.body)) ?? .null }

    @Test func lockUnlockAndHealth() {
        #expect(send(.post, "/v1/admin/lock", token: admin).status == 200)
        let health = send(.get, "/v1/health", token: nil)
        #expect(health.status == 503 && json(health)["locked"] == .bool(true))
        vault.state.withLock { $0.wrongKey = true }
        let refused = send(.post, "/v1/admin/unlock", token: admin)
        #expect(refused.status == 401 && json(refused)["error"] == .string("errSecAuthFailed"))
        #expect(vault.isLocked)
        vault.state.withLock { $0.wrongKey = false }
        let unlocked = send(.post, "/v1/admin/unlock", token: admin, body: "{}")
        #expect(unlocked.status == 200 && json(unlocked)["locked"] == .bool(false))
        #expect(send(.get, "/health", token: nil).status == 200)
    }

    @Test func adminOnlyAndNoArguments() {
        for (method, path) in [
            (HTTPMethod.post, "/v1/admin/lock"), (.post, "/v1/admin/unlock"), (.post, "/v1/admin/rotate"),
            (.post, "/v1/admin/rekey"), (.get, "/v1/admin/backup"), (.get, "/v1/admin/vault"),
        ] {
            #expect(send(method, path, token: client).status == 403, "\(path)")
            #expect(send(method, path, token: nil).status == 401, "\(path)")
        }
        #expect(send(.post, "/v1/admin/lock", token: admin, body: #"{"now":true}"#).status == 400)
        #expect(send(.post, "/v1/admin/rekey", query: [.init(name: "x", value: "1")], token: admin).status == 400)
        #expect(send(.post, "/v1/admin/rotate", query: [.init(name: "reencrypt", value: "yes")], token: admin).status == 400)
        #expect(vault.state.withLock { $0.calls }.isEmpty)
    }

    @Test func rotateRekeyBackupAndStatus() throws {
        let rotate = send(.post, "/v1/admin/rotate", token: admin)
        #expect(rotate.status == 200)
        #expect(json(rotate)["status"] == .integer(0) && json(rotate)["term"] == .integer(2))
        let reencrypt = send(.post, "/v1/admin/rotate", query: [.init(name: "reencrypt", value: "true")], token: admin)
        #expect(json(reencrypt)["term"] == .integer(3) && json(reencrypt)["reencrypting"] == .bool(true))
        let rekey = send(.post, "/v1/admin/rekey", token: admin)
        #expect(rekey.status == 200 && json(rekey)["rewrapped"] == .integer(3))
        let backup = send(.get, "/v1/admin/backup", token: admin)
        let file = try #require(backup.bodyFile)
        #expect(backup.status == 200 && backup.body.isEmpty && file.size == 16)
        let descriptor = try #require(file.takeDescriptor())
        defer { close(descriptor) }
        var sent = [UInt8](repeating: 0, count: 32)
        #expect(pread(descriptor, &sent, sent.count, 0) == 16 && Array(sent.prefix(16)) == Array("KEYCHAIND-BACKUP".utf8))
        #expect(file.takeDescriptor() == nil)
        #expect(backup.headers.contains { $0.name == "Content-Type" && $0.value == "application/octet-stream" })
        let status = json(send(.get, "/v1/admin/vault", token: admin))
        #expect(status["currentTerm"] == .integer(3) && status["locked"] == .bool(false))
        #expect(status["reencryption"]?["done"] == .integer(4))
        #expect(vault.state.withLock { $0.calls } == ["rotate reencrypt=false", "rotate reencrypt=true", "rekey"])
        _ = send(.post, "/v1/admin/lock", token: admin)
        let locked = send(.post, "/v1/admin/rotate", token: admin)
        #expect(locked.status == 503 && json(locked)["status"] == .integer(-25308))
    }
}
