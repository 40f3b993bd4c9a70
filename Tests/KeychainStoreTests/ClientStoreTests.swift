import Foundation
import KeychainCore
import Synchronization
import Testing

@testable import KeychainStore

@Suite("SQLite client store: the last admin stays")
struct ClientStoreTests {
    /// The last-admin guard is one step in the store: two revocations of the last two admins
    /// at once leave exactly one admin.
    @Test func revokingTheLastTwoAdminsAtOnceLeavesOne() throws {
        let fixture = try VaultFixture()
        let clients = fixture.vault.clients
        for round in 0..<40 {
            let names = ["first-\(round)", "second-\(round)"]
            for name in names {
                try clients.addClient(
                    Client(name: name, accessGroups: ["admin"], role: .admin, createdAt: Date()),
                    tokenHash: Digest.sha256(Array(name.utf8)))
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

    @Test func theLastAdminIsRefusedAndOthersGo() throws {
        let fixture = try VaultFixture()
        let clients = fixture.vault.clients
        try clients.addClient(
            Client(name: "reader", accessGroups: ["g1"], role: .client, createdAt: Date()), tokenHash: [1, 2, 3])
        #expect { _ = try clients.removeClient(named: "admin") } throws: { ($0 as? KeychainError)?.code == .param }
        #expect(try clients.removeClient(named: "reader"))
        #expect(try !clients.removeClient(named: "nobody"))
        #expect(try clients.clients().map(\.name) == ["admin"])
    }
}
