import Foundation
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
    }

    /// Add (a taken name is errSecDuplicateItem), find by token hash, list by name, replace a
    /// token (the old one no longer finds the client), remove (once).
    public func addFindReplaceAndRemove() throws {
        let (clients, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        let before = try clients.clients().map(\.name)
        let app = Client(name: "app", accessGroups: ["g1"], role: .client, createdAt: Date(millisecondsSince1970: 1_000))
        try clients.addClient(app, tokenHash: [9, 9])
        // The code is the contract; the message may name the client.
        #expect { try clients.addClient(app, tokenHash: [8, 8]) } throws: { ($0 as? KeychainError)?.code == .duplicateItem }
        #expect(try clients.client(forTokenHash: [9, 9]) == app)
        #expect(try clients.clients().map(\.name) == (before + ["app"]).sorted())
        #expect(try clients.replaceToken(ofClient: "app", tokenHash: [7]))
        #expect(try clients.client(forTokenHash: [9, 9]) == nil)
        #expect(try clients.client(forTokenHash: [7]) == app)
        #expect(try !clients.replaceToken(ofClient: "nobody", tokenHash: [6]))
        #expect(try clients.removeClient(named: "app"))
        #expect(try !clients.removeClient(named: "app"))
        #expect(try clients.client(forTokenHash: [7]) == nil)
    }

    /// The last admin is refused (errSecParam); other clients go; an unknown name is false.
    public func theLastAdminIsRefusedAndOthersGo() throws {
        let (clients, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        try clients.addClient(Client(name: "root", accessGroups: ["admin"], role: .admin, createdAt: Date()), tokenHash: [4, 4])
        for client in try clients.clients() where client.name != "root" {
            #expect(try clients.removeClient(named: client.name))
        }
        try clients.addClient(
            Client(name: "reader", accessGroups: ["g1"], role: .client, createdAt: Date()), tokenHash: [1, 2, 3])
        #expect { _ = try clients.removeClient(named: "root") } throws: { ($0 as? KeychainError)?.code == .param }
        #expect(try clients.removeClient(named: "reader"))
        #expect(try !clients.removeClient(named: "nobody"))
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
                    tokenHash: Array(name.utf8))
            }
            // Leave exactly the two new admins.
            for client in try clients.clients() where client.role == .admin && !names.contains(client.name) {
                #expect(try clients.removeClient(named: client.name))
            }
            let outcomes = Mutex<[Result<Bool, KeychainError>]>([])
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for name in names {
                DispatchQueue.global().async(group: group) {
                    start.wait()
                    let outcome: Result<Bool, KeychainError>
                    do {
                        outcome = .success(try clients.removeClient(named: name))
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
    /// thread's next lookup, cached or not (revocation is immediate everywhere).
    public func aChangeReachesEveryThreadsNextLookup() throws {
        let (clients, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        let app = Client(name: "app", accessGroups: ["g1"], role: .client, createdAt: Date(millisecondsSince1970: 1_000))
        try clients.addClient(app, tokenHash: [5, 5])
        // One thread looks the token up twice per round (the second from its cache, if any).
        let go = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let seen = Mutex<[Client?]>([])
        Thread {
            for _ in 0..<2 {
                go.wait()
                for _ in 0..<2 {
                    let client = (try? clients.client(forTokenHash: [5, 5])) ?? nil
                    seen.withLock { $0.append(client) }
                }
                done.signal()
            }
        }.start()
        go.signal()
        done.wait()
        #expect(seen.withLock { $0 } == [app, app])
        #expect(try clients.removeClient(named: "app"))
        go.signal()
        done.wait()
        #expect(seen.withLock { $0 } == [app, app, nil, nil])
        #expect(try clients.client(forTokenHash: [5, 5]) == nil)
    }
}
