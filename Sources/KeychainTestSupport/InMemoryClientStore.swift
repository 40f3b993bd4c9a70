public import KeychainCore
import Synchronization

/// A `ClientStore` in memory, for router tests.
public final class InMemoryClientStore: ClientStore {
    private struct Entry {
        var client: Client
        var tokenHash: [UInt8]
    }

    private let entries = Mutex([String: Entry]())

    public init() {}

    public func addClient(_ client: Client, tokenHash: [UInt8]) throws {
        try entries.withLock { entries in
            guard entries[client.name] == nil else {
                throw KeychainError.duplicateItem("client \"\(client.name)\" exists")
            }
            entries[client.name] = Entry(client: client, tokenHash: tokenHash)
        }
    }

    public func client(forTokenHash tokenHash: [UInt8]) throws -> Client? {
        entries.withLock { entries in
            entries.values.first { constantTimeEqual($0.tokenHash, tokenHash) }?.client
        }
    }

    public func clients() throws -> [Client] {
        entries.withLock { entries in entries.values.map(\.client).sorted { $0.name < $1.name } }
    }

    public func removeClient(named name: String) throws -> Bool {
        try entries.withLock { entries in
            guard let entry = entries[name] else { return false }
            if entry.client.role == .admin, entries.values.count(where: { $0.client.role == .admin }) == 1 {
                throw KeychainError.lastAdmin(name)
            }
            entries[name] = nil
            return true
        }
    }

    public func replaceToken(ofClient name: String, tokenHash: [UInt8]) throws -> Bool {
        entries.withLock { entries in
            guard entries[name] != nil else { return false }
            entries[name]?.tokenHash = tokenHash
            return true
        }
    }
}

/// A `ClientTokenIssuer` for tests: real `kc_` tokens from the system generator, "hashed" by a
/// non-cryptographic mix (tests only; the server uses SHA-256).
public struct TestTokenIssuer: ClientTokenIssuer {
    public init() {}

    public func newToken() -> (token: String, hash: [UInt8]) {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let token = "kc_" + String((0..<43).map { _ in alphabet[Int(generator.next() % 64)] })
        return (token, hash(token))
    }

    public func hash(utf8 token: UnsafeRawBufferPointer) -> [UInt8] {
        Array("h:".utf8) + Array(token)
    }
}
