public import Foundation
public import KeychainCore
import Synchronization

/// A `ClientStore` in memory, for router tests.
public final class InMemoryClientStore: ClientStore {
    private struct State {
        var clients: [String: Client] = [:]
        var tokens: [(hash: [UInt8], record: TokenRecord, loginGroups: [String]?)] = []

        func holder(_ index: Int) -> TokenHolder? {
            let (_, record, loginGroups) = tokens[index]
            switch record.source {
            case .client(let name):
                return clients[name].map { TokenHolder(client: $0, token: record) }
            case .login:
                let client = Client(name: record.holderName, accessGroups: loginGroups ?? [], role: .client, createdAt: record.issuedAt)
                return TokenHolder(client: client, token: record)
            }
        }

        /// Live admin tokens, leaving out those `excluded` matches.
        func liveAdminTokens(now: Date, excluding excluded: (TokenRecord) -> Bool) -> Int {
            tokens.indices.count { index in
                guard let holder = holder(index) else { return false }
                return holder.client.role == .admin && !holder.token.isExpired(at: now) && !excluded(holder.token)
            }
        }
    }

    private let state = Mutex(State())

    public init() {}

    public func addClient(_ client: Client, token: NewToken) throws {
        try state.withLock { state in
            guard state.clients[client.name] == nil else {
                throw KeychainError.duplicateItem("client \"\(client.name)\" exists")
            }
            state.clients[client.name] = client
            state.tokens.append((token.hash, token.record, nil))
        }
    }

    public func holder(ofTokenHash tokenHash: [UInt8]) throws -> TokenHolder? {
        state.withLock { state in
            state.tokens.firstIndex { constantTimeEqual($0.hash, tokenHash) }.flatMap { state.holder($0) }
        }
    }

    public func holder(ofAccessor accessor: String) throws -> TokenHolder? {
        state.withLock { state in state.tokens.firstIndex { $0.record.accessor == accessor }.flatMap { state.holder($0) } }
    }

    public func clients() throws -> [Client] {
        state.withLock { state in state.clients.values.sorted { $0.name < $1.name } }
    }

    public func client(named name: String) throws -> Client? {
        state.withLock { $0.clients[name] }
    }

    public func removeClient(named name: String, now: Date) throws -> Bool {
        try state.withLock { state in
            guard state.clients[name] != nil else { return false }
            if state.liveAdminTokens(now: now, excluding: { $0.source == .client(name) }) == 0,
                state.liveAdminTokens(now: now, excluding: { _ in false }) > 0
            {
                throw KeychainError.lastAdmin(name)
            }
            state.clients[name] = nil
            state.tokens.removeAll { $0.record.source == .client(name) }
            return true
        }
    }

    public func replaceToken(ofClient name: String, token: NewToken) throws -> Bool {
        state.withLock { state in
            guard state.clients[name] != nil else { return false }
            state.tokens.removeAll { $0.record.source == .client(name) }
            state.tokens.append((token.hash, token.record, nil))
            return true
        }
    }

    public func addLoginToken(_ token: NewToken, accessGroups: [String], liveLimit: Int, now: Date) throws -> Bool {
        state.withLock { state in
            let live = state.tokens.count { $0.record.source == token.record.source && !$0.record.isExpired(at: now) }
            guard live < liveLimit else { return false }
            state.tokens.append((token.hash, token.record, accessGroups))
            return true
        }
    }

    public func tokens(of owner: TokenOwner, now: Date) throws -> [TokenRecord] {
        let source: TokenRecord.Source = switch owner {
        case .client(let name): .client(name)
        case .loginRole(let role): .login(role: role)
        }
        return state.withLock { state in
            state.tokens.map(\.record).filter { $0.source == source && !$0.isExpired(at: now) }
        }
    }

    public func adminHasTokenWithoutExpiry() throws -> Bool {
        state.withLock { state in
            state.tokens.indices.contains { state.holder($0)?.client.role == .admin && state.tokens[$0].record.expiresAt == nil }
        }
    }

    public func renewToken(accessor: String, expiresAt: Date, now: Date) throws -> TokenRecord? {
        state.withLock { state in
            guard let index = state.tokens.firstIndex(where: { $0.record.accessor == accessor }) else { return nil }
            state.tokens[index].record.expiresAt = expiresAt
            state.tokens[index].record.lastRenewal = now.truncatedToMilliseconds
            return state.tokens[index].record
        }
    }

    public func revokeToken(accessor: String, now: Date) throws -> Bool {
        try state.withLock { state in
            guard let index = state.tokens.firstIndex(where: { $0.record.accessor == accessor }) else { return false }
            if let holder = state.holder(index), holder.client.role == .admin, !holder.token.isExpired(at: now),
                state.liveAdminTokens(now: now, excluding: { $0.accessor == accessor }) == 0
            {
                throw KeychainError.lastAdmin(holder.client.name)
            }
            state.tokens.remove(at: index)
            return true
        }
    }

    public func revokeLoginTokens(role: String) throws -> Int {
        state.withLock { state in
            let before = state.tokens.count
            state.tokens.removeAll { $0.record.source == .login(role: role) }
            return before - state.tokens.count
        }
    }

    public func purgeTokens(expiredBefore cutoff: Date) throws -> Int {
        state.withLock { state in
            let before = state.tokens.count
            state.tokens.removeAll { $0.record.expiresAt.map { $0 < cutoff } ?? false }
            return before - state.tokens.count
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

    public func newAccessor() -> String {
        var generator = SystemRandomNumberGenerator()
        return TokenAccessor.format((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    public func hash(utf8 token: UnsafeRawBufferPointer) -> [UInt8] {
        Array("h:".utf8) + Array(token)
    }
}
