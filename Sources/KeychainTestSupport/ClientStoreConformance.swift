public import Foundation
public import KeychainCore
import Synchronization
import Testing

/// What every `ClientStore` must do, checked with `#expect` (a failure reports the line here, under
/// the calling test's name): call `run()` from one test per backend. A new backend's store passes
/// these before it serves.
///
/// `make` returns a new store for each check (and whatever keeps it alive until the check ends); it
/// may already hold clients (a data directory's first admin): the checks leave those alone except
/// where one says otherwise.
public struct ClientStoreConformance: Sendable {
    public typealias Factory = @Sendable () throws -> (store: any ClientStore, keepAlive: AnyObject?)

    private let make: Factory

    public init(_ make: @escaping Factory) { self.make = make }

    /// Every check, each on a store of its own.
    public func run() throws {
        try addFindReplaceAndRemove()
        try theLastAdminIsRefusedAndOthersGo()
        try revokingTheLastTwoAdminsAtOnceLeavesOne()
        try aChangeReachesEveryThreadsNextLookup()
        try tokensExpireRenewAndArePurged()
        try loginTokensAreBoundedAndGoWithTheirRole()
        try theLastLiveAdminTokenCannotBeRevoked()
    }

    /// A token record for `source`, issued now (to the millisecond, as stores keep times).
    public static func token(
        _ source: TokenRecord.Source, hash: [UInt8], expiresIn: TimeInterval? = nil, maxIn: TimeInterval? = nil,
        subject: String? = nil, issuedAt: Date = Date()
    ) -> NewToken {
        let issued = issuedAt.truncatedToMilliseconds
        var random = SystemRandomNumberGenerator()
        let record = TokenRecord(
            accessor: TokenAccessor.format((0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }), source: source,
            subject: subject, issuedAt: issued, expiresAt: expiresIn.map { issued.addingTimeInterval($0) },
            maxExpiresAt: (maxIn ?? expiresIn).map { issued.addingTimeInterval($0) }, ttlSeconds: expiresIn.map { Int64($0) })
        return NewToken(hash: hash, record: record)
    }

    /// Add (a taken name is errSecDuplicateItem), find by token hash, list by name, replace a
    /// token (the old one no longer finds the client), remove (once).
    public func addFindReplaceAndRemove() throws {
        let (clients, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        let before = try clients.clients().map(\.name)
        let app = Client(name: "app", accessGroups: ["g1"], role: .client, createdAt: Date(millisecondsSince1970: 1_000))
        let first = Self.token(.client("app"), hash: [9, 9])
        try clients.addClient(app, token: first)
        // The code is the contract; the message may name the client.
        #expect { try clients.addClient(app, token: Self.token(.client("app"), hash: [8, 8])) } throws: {
            ($0 as? KeychainError)?.code == .duplicateItem
        }
        #expect(try clients.holder(ofTokenHash: [9, 9]) == TokenHolder(client: app, token: first.record))
        #expect(try clients.holder(ofAccessor: first.record.accessor)?.token == first.record)
        #expect(try clients.client(named: "app") == app)
        #expect(try clients.clients().map(\.name) == (before + ["app"]).sorted())
        let second = Self.token(.client("app"), hash: [7])
        #expect(try clients.replaceToken(ofClient: "app", token: second))
        #expect(try clients.holder(ofTokenHash: [9, 9]) == nil)
        #expect(try clients.holder(ofAccessor: first.record.accessor) == nil)
        #expect(try clients.holder(ofTokenHash: [7])?.client == app)
        #expect(try clients.tokens(of: .client("app"), now: Date()) == [second.record])
        #expect(try !clients.replaceToken(ofClient: "nobody", token: Self.token(.client("nobody"), hash: [6])))
        #expect(try clients.removeClient(named: "app", now: Date()))
        #expect(try !clients.removeClient(named: "app", now: Date()))
        #expect(try clients.holder(ofTokenHash: [7]) == nil)
        #expect(try clients.tokens(of: .client("app"), now: Date()).isEmpty)
    }

    /// The last admin is refused (errSecParam); other clients go; an unknown name is false.
    public func theLastAdminIsRefusedAndOthersGo() throws {
        let (clients, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        try clients.addClient(
            Client(name: "root", accessGroups: ["admin"], role: .admin, createdAt: Date()), token: Self.token(.client("root"), hash: [4, 4]))
        for client in try clients.clients() where client.name != "root" {
            #expect(try clients.removeClient(named: client.name, now: Date()))
        }
        try clients.addClient(
            Client(name: "reader", accessGroups: ["g1"], role: .client, createdAt: Date()),
            token: Self.token(.client("reader"), hash: [1, 2, 3]))
        #expect { _ = try clients.removeClient(named: "root", now: Date()) } throws: { ($0 as? KeychainError)?.code == .param }
        #expect(try clients.removeClient(named: "reader", now: Date()))
        #expect(try !clients.removeClient(named: "nobody", now: Date()))
        #expect(try clients.clients().map(\.name) == ["root"])
    }

    /// The last-admin guard is one step in the store: two revocations of the last two admins at
    /// once leave exactly one admin.
    public func revokingTheLastTwoAdminsAtOnceLeavesOne(rounds: Int = 40) throws {
        let (clients, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        for round in 0..<rounds {
            let names = ["first-\(round)", "second-\(round)"]
            for name in names {
                try clients.addClient(
                    Client(name: name, accessGroups: ["admin"], role: .admin, createdAt: Date()),
                    token: Self.token(.client(name), hash: Array(name.utf8)))
            }
            // Leave exactly the two new admins.
            for client in try clients.clients() where client.role == .admin && !names.contains(client.name) {
                #expect(try clients.removeClient(named: client.name, now: Date()))
            }
            let outcomes = Mutex<[Result<Bool, KeychainError>]>([])
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for name in names {
                DispatchQueue.global().async(group: group) {
                    start.wait()
                    let outcome: Result<Bool, KeychainError>
                    do {
                        outcome = .success(try clients.removeClient(named: name, now: Date()))
                    } catch let error as KeychainError {
                        outcome = .failure(error)
                    } catch {
                        outcome = .failure(.io("\(error)"))
                    }
                    outcomes.withLock { $0.append(outcome) }
                }
            }
            start.signal()
            start.signal()
            group.wait()
            let results = outcomes.withLock { $0 }
            #expect(results.filter { (try? $0.get()) == true }.count == 1, "round \(round): \(results)")
            #expect(results.contains { if case .failure(let error) = $0 { error.code == .param } else { false } })
            #expect(try clients.clients().filter { $0.role == .admin }.count == 1)
        }
    }

    /// A store may cache lookups per thread; a change made on one thread is seen by another
    /// thread's next lookup, cached or not (revocation is immediate everywhere): a token revoked
    /// by its accessor, then its client removed.
    public func aChangeReachesEveryThreadsNextLookup() throws {
        let (clients, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        let app = Client(name: "app", accessGroups: ["g1"], role: .client, createdAt: Date(millisecondsSince1970: 1_000))
        try clients.addClient(app, token: Self.token(.client("app"), hash: [5, 5]))
        let other = Self.token(.login(role: "ci"), hash: [5, 6], expiresIn: 600, subject: "job")
        #expect(try clients.addLoginToken(other, accessGroups: ["g1"], liveLimit: 10, now: Date()))
        // One thread looks the token up twice per round (the second from its cache, if any).
        let go = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let seen = Mutex<[String?]>([])
        Thread {
            for _ in 0..<3 {
                go.wait()
                for hash: [UInt8] in [[5, 5], [5, 5], [5, 6], [5, 6]] {
                    let name = ((try? clients.holder(ofTokenHash: hash)) ?? nil)?.client.name
                    seen.withLock { $0.append(name) }
                }
                done.signal()
            }
        }.start()
        go.signal()
        done.wait()
        #expect(seen.withLock { $0 } == ["app", "app", "jwt:ci", "jwt:ci"])
        #expect(try clients.revokeToken(accessor: other.record.accessor, now: Date()))
        go.signal()
        done.wait()
        #expect(seen.withLock { Array($0.suffix(4)) } == ["app", "app", nil, nil])
        #expect(try clients.removeClient(named: "app", now: Date()))
        go.signal()
        done.wait()
        #expect(seen.withLock { Array($0.suffix(4)) } == [nil, nil, nil, nil])
        #expect(try clients.holder(ofTokenHash: [5, 5]) == nil)
    }

    /// A client with a lifetime: its token expires, renews (the record as stored after, the
    /// renewal's time recorded and read back by every lookup), is listed while live and found
    /// (for its caller to refuse) once expired, then purged.
    public func tokensExpireRenewAndArePurged() throws {
        let (clients, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        let lifetime = TokenLifetime(ttlSeconds: 60, maxTTLSeconds: 600)
        let svc = Client(name: "svc", accessGroups: ["g1"], role: .client, createdAt: Date().truncatedToMilliseconds, tokenLifetime: lifetime)
        let issuedAt = Date().addingTimeInterval(-120)
        let token = Self.token(.client("svc"), hash: [3, 1], expiresIn: 60, maxIn: 600, issuedAt: issuedAt)
        try clients.addClient(svc, token: token)
        #expect(try clients.client(named: "svc")?.tokenLifetime == lifetime)
        let expired = try #require(try clients.holder(ofTokenHash: [3, 1]))
        #expect(expired.token.isExpired(at: Date()))
        #expect(try clients.tokens(of: .client("svc"), now: Date()).isEmpty)
        #expect(expired.token.lastRenewal == nil)
        let renewedAt = Date().truncatedToMilliseconds
        let later = renewedAt.addingTimeInterval(60)
        let renewed = try #require(try clients.renewToken(accessor: token.record.accessor, expiresAt: later, now: renewedAt))
        #expect(renewed.expiresAt == later && renewed.maxExpiresAt == token.record.maxExpiresAt && renewed.ttlSeconds == 60)
        #expect(renewed.lastRenewal == renewedAt && renewed.grantedSeconds == 60)
        #expect(try clients.holder(ofTokenHash: [3, 1])?.token == renewed)
        #expect(try clients.holder(ofAccessor: token.record.accessor)?.token == renewed)
        #expect(try clients.tokens(of: .client("svc"), now: Date()) == [renewed])
        #expect(try clients.renewToken(accessor: TokenAccessor.format(Array(repeating: 0, count: 16)), expiresAt: later, now: renewedAt) == nil)
        #expect(try clients.purgeTokens(expiredBefore: Date()) == 0)
        // A token that expired two hours ago: found (for its caller to refuse) until purged.
        let old = Self.token(.client("old"), hash: [3, 2], expiresIn: 60, issuedAt: Date().addingTimeInterval(-7260))
        try clients.addClient(
            Client(name: "old", accessGroups: ["g1"], role: .client, createdAt: Date(), tokenLifetime: lifetime), token: old)
        #expect(try clients.holder(ofTokenHash: [3, 2])?.token.isExpired(at: Date()) == true)
        #expect(try clients.purgeTokens(expiredBefore: Date().addingTimeInterval(-3600)) == 1)
        #expect(try clients.holder(ofTokenHash: [3, 2]) == nil)
        #expect(try clients.holder(ofTokenHash: [3, 1])?.token == renewed)
        #expect(try clients.removeClient(named: "old", now: Date()))
        #expect(try clients.removeClient(named: "svc", now: Date()))
    }

    /// A login token: held by `jwt:<role>` with the groups it was given, counted against its
    /// role's limit while live, listed by role, revoked with its role.
    public func loginTokensAreBoundedAndGoWithTheirRole() throws {
        let (clients, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        let first = Self.token(.login(role: "ci"), hash: [2, 1], expiresIn: 600, maxIn: 3600, subject: "repo:a")
        #expect(try clients.addLoginToken(first, accessGroups: ["builds", "cache"], liveLimit: 2, now: Date()))
        let holder = try #require(try clients.holder(ofTokenHash: [2, 1]))
        #expect(holder.client.name == "jwt:ci" && holder.client.accessGroups == ["builds", "cache"] && holder.client.role == .client)
        #expect(holder.token == first.record && holder.token.subject == "repo:a" && holder.token.renewable)
        let stale = Self.token(.login(role: "ci"), hash: [2, 2], expiresIn: 1, subject: "repo:b", issuedAt: Date().addingTimeInterval(-10))
        #expect(try clients.addLoginToken(stale, accessGroups: ["builds"], liveLimit: 2, now: Date()))
        // The expired one does not count: one more fits, then the role is full.
        #expect(try clients.addLoginToken(Self.token(.login(role: "ci"), hash: [2, 3], expiresIn: 600), accessGroups: ["builds"], liveLimit: 2, now: Date()))
        #expect(try !clients.addLoginToken(Self.token(.login(role: "ci"), hash: [2, 4], expiresIn: 600), accessGroups: ["builds"], liveLimit: 2, now: Date()))
        #expect(try clients.holder(ofTokenHash: [2, 4]) == nil)
        #expect(try clients.tokens(of: .loginRole("ci"), now: Date()).count == 2)
        #expect(try clients.tokens(of: .loginRole("other"), now: Date()).isEmpty)
        #expect(try clients.revokeLoginTokens(role: "ci") == 3)
        #expect(try clients.holder(ofTokenHash: [2, 1]) == nil)
        #expect(try !clients.clients().contains { $0.name.hasPrefix("jwt:") })
    }

    /// Revoking the last live admin token is errSecParam, by accessor as by client; a second
    /// admin's live token lets it go; expired admin tokens do not count.
    public func theLastLiveAdminTokenCannotBeRevoked() throws {
        let (clients, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        let boss = Self.token(.client("boss"), hash: [6, 1])
        try clients.addClient(Client(name: "boss", accessGroups: ["admin"], role: .admin, createdAt: Date()), token: boss)
        for client in try clients.clients() where client.name != "boss" {
            #expect(try clients.removeClient(named: client.name, now: Date()))
        }
        #expect(try clients.adminHasTokenWithoutExpiry())
        #expect { _ = try clients.revokeToken(accessor: boss.record.accessor, now: Date()) } throws: {
            ($0 as? KeychainError)?.code == .param
        }
        let lapsed = Self.token(.client("lapsed"), hash: [6, 2], expiresIn: 1, issuedAt: Date().addingTimeInterval(-10))
        try clients.addClient(
            Client(name: "lapsed", accessGroups: ["admin"], role: .admin, createdAt: Date(), tokenLifetime: TokenLifetime(ttlSeconds: 1, maxTTLSeconds: 1)),
            token: lapsed)
        #expect { _ = try clients.revokeToken(accessor: boss.record.accessor, now: Date()) } throws: {
            ($0 as? KeychainError)?.code == .param
        }
        #expect { _ = try clients.removeClient(named: "boss", now: Date()) } throws: { ($0 as? KeychainError)?.code == .param }
        let deputy = Self.token(.client("deputy"), hash: [6, 3], expiresIn: 600)
        try clients.addClient(
            Client(name: "deputy", accessGroups: ["admin"], role: .admin, createdAt: Date(), tokenLifetime: TokenLifetime(ttlSeconds: 600, maxTTLSeconds: 600)),
            token: deputy)
        #expect(try clients.revokeToken(accessor: boss.record.accessor, now: Date()))
        #expect(try !clients.adminHasTokenWithoutExpiry())
        #expect(try !clients.revokeToken(accessor: boss.record.accessor, now: Date()))
        #expect { _ = try clients.revokeToken(accessor: deputy.record.accessor, now: Date()) } throws: {
            ($0 as? KeychainError)?.code == .param
        }
        #expect(try clients.revokeToken(accessor: lapsed.record.accessor, now: Date()))
    }
}

extension ClientStore {
    /// Adds `client` with a token that never expires and has this hash (tests that need a caller).
    public func addClient(_ client: Client, tokenHash: [UInt8]) throws {
        try addClient(client, token: ClientStoreConformance.token(.client(client.name), hash: tokenHash))
    }

    /// The client holding the token with this hash, or nil.
    public func client(forTokenHash tokenHash: [UInt8]) throws -> Client? {
        try holder(ofTokenHash: tokenHash)?.client
    }
}
