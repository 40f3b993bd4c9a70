import Dispatch
import Foundation
import KeychainTestSupport
import KeychainCore
import Synchronization
import Testing
@testable import KeychainStore
@testable import KeychainSQLite

/// Group commit on a vault's item store: writes that arrive together share one commit, and each
/// still gets its own outcome (`SQLiteItemStore+GroupCommit.swift`).
@Suite("Group commit")
struct GroupCommitTests {
    private struct Abandoned: Error, Equatable {}

    private let group = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"])

    private func accounts(_ store: any ItemStore) throws -> [String] {
        try store.find(group, limit: nil, after: nil, reading: .attributes).items.compactMap {
            if case .string(let account)? = $0.attributes[.account] { return account }
            return nil
        }
    }

    /// Runs `writes` as one batch: a first write holds the writer (its body waits) until all of
    /// them are queued behind it, in order; they are then committed together. Returns each
    /// write's error (nil: committed) in order.
    private func inOneBatch(_ vault: Vault, _ writes: [@Sendable (any ItemOperations) throws -> Void]) throws
        -> [(any Error)?]
    {
        let store = vault.items
        let release = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        let holderEntered = DispatchSemaphore(value: 0)
        // Threads of their own: Dispatch's pool grows slowly past the cores while its threads wait.
        func start(_ body: @escaping @Sendable () -> Void) {
            done.enter()
            Thread {
                body()
                done.leave()
            }.start()
        }
        start {
            try? store.transaction { transaction in
                holderEntered.signal()
                release.wait()
                try transaction.add([item(account: "holder", service: "batch")])
            }
        }
        holderEntered.wait()
        let outcomes = Mutex([(any Error)?](repeating: nil, count: writes.count))
        for (index, write) in writes.enumerated() {
            start {
                do {
                    try store.transaction { try write($0) }
                } catch {
                    outcomes.withLock { $0[index] = error }
                }
            }
            // In order: each is queued before the next is sent.
            let queued = waitUntil { vault.commitStatistics.queued == index + 1 }
            try #require(queued, "write \(index) did not queue")
        }
        let before = vault.commitStatistics
        release.signal()
        done.wait()
        let after = vault.commitStatistics
        // The holder's commit and one for the whole batch.
        #expect(after.commits - before.commits == 2)
        #expect(after.writes - before.writes == UInt64(writes.count + 1))
        return outcomes.withLock { $0 }
    }

    @Test func aDuplicateInABatchFailsAloneWhileTheOthersCommit() throws {
        let fixture = try VaultFixture()
        let store = fixture.vault.items
        try store.add([item(account: "stored", service: "batch")])
        let outcomes = try inOneBatch(fixture.vault, [
            { try $0.add([item(account: "a", service: "batch")]) },
            { try $0.add([item(account: "stored", service: "batch")]) },  // a clash with a stored item
            { try $0.add([item(account: "b", service: "batch")]) },
            { try $0.add([item(account: "a", service: "batch")]) },  // a clash with a batch mate
            { try $0.add([item(account: "c", service: "batch")]) },
        ])
        #expect(outcomes.map { ($0 as? KeychainError)?.code } == [nil, .duplicateItem, nil, .duplicateItem, nil])
        #expect(try accounts(store).sorted() == ["a", "b", "c", "holder", "stored"])
    }

    @Test func aFailingWriteRollsBackAloneWithoutTouchingItsBatchMates() throws {
        let fixture = try VaultFixture()
        let store = fixture.vault.items
        try store.add([item(account: "kept", service: "batch", label: "before")])
        let kept = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.account: .string("kept")])
        let relabel = ItemChanges(attributes: [.label: .string("after")], secret: nil, modificationDate: Date())
        let outcomes = try inOneBatch(fixture.vault, [
            { try $0.add([item(account: "first", service: "batch")]) },
            { operations in  // the body throws after writing: all of it undone
                try operations.add([item(account: "thrown", service: "batch")])
                _ = try operations.delete(kept)
                throw Abandoned()
            },
            { operations in  // an operation fails and the body catches it: still undone
                try operations.add([item(account: "caught", service: "batch")])
                _ = try? operations.add([item(account: "first", service: "batch")])
            },
            { _ = try $0.update(kept, with: relabel) },
            { try $0.add([item(account: "last", service: "batch")]) },
        ])
        #expect(outcomes[0] == nil)
        #expect(outcomes[1] is Abandoned)
        #expect((outcomes[2] as? KeychainError)?.code == .duplicateItem)
        #expect(outcomes[3] == nil && outcomes[4] == nil)
        #expect(try accounts(store).sorted() == ["first", "holder", "kept", "last"])
        let label = try store.find(kept, limit: nil, after: nil, reading: .attributes).items.first?.attributes[.label]
        #expect(label == .string("after"))
    }

    /// In a batch, each write is held to the quota on the totals the writes before it left (a
    /// refused one adds nothing to them), and `group_usage` ends as the items counted.
    @Test func eachWriteOfABatchIsHeldToTheQuotaOnTheTotalsBeforeIt() throws {
        let fixture = try VaultFixture()
        fixture.vault.close()
        let vault = try fixture.dataDirectory.open(logger: quietLogger, quota: GroupQuota(items: 4, secretBytes: 20))
        defer { vault.close() }
        // With the holder's item ("secret"): 2 items, 11 secret bytes before the batch.
        try vault.items.add([item(account: "stored", service: "batch", secret: "12345")])
        let outcomes = try inOneBatch(vault, [
            { try $0.add([item(account: "a", service: "batch", secret: "12345")]) },
            { try $0.add([item(account: "b", service: "batch", secret: "123456")]) },  // 22 secret bytes
            { try $0.add([item(account: "c", service: "batch", secret: "1234")]) },  // 20 bytes, 4 items
            { try $0.add([item(account: "d", service: "batch", secret: nil)]) },  // a fifth item
            { _ = try $0.delete(ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.account: .string("a")])) },
            { try $0.add([item(account: "e", service: "batch", secret: "1")]) },  // 16 bytes, four items again
        ])
        #expect(outcomes.map { ($0 as? KeychainError)?.code } == [nil, .diskFull, nil, .diskFull, nil, nil])
        #expect(try accounts(vault.items).sorted() == ["c", "e", "holder", "stored"])
        let usage = try vault.sqlitePool!.read { try GroupUsageTable.usage(of: "g1", on: $0) }
        #expect([usage.items, usage.secretBytes] == [4, 16])
    }

    /// A write that starts a keyring term and rolls back takes the term with it; the batch mate
    /// after it starts the term again, and what it sealed opens after the vault is reopened.
    @Test func aTermStartedByARolledBackWriteIsWrittenAgainByTheNext() throws {
        let fixture = try VaultFixture(rotationThreshold: 1)
        try fixture.vault.items.add([item(account: "seed", service: "batch", secret: "seed")])
        let outcomes = try inOneBatch(fixture.vault, [
            { operations in
                try operations.add([item(account: "gone", service: "batch", secret: "gone")])
                throw Abandoned()
            },
            { try $0.add([item(account: "sealed", service: "batch", secret: "sealed")]) },
        ])
        #expect(outcomes[0] is Abandoned && outcomes[1] == nil)
        fixture.vault.close()
        let reopened = try fixture.dataDirectory.open(logger: quietLogger, rotationThreshold: 1)
        defer { reopened.close() }
        let sealed = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.account: .string("sealed")])
        let page = try reopened.items.find(sealed, limit: nil, after: nil, reading: .all)
        #expect(page.items.first?.secret?.utf8String() == "sealed")
        #expect(try reopened.items.find(group, limit: nil, after: nil, reading: .all).items.count == 3)
    }

    @Test func concurrentAddsEachSeeTheirOwnOutcomeInFewerCommits() throws {
        let fixture = try VaultFixture()
        let store = fixture.vault.items
        let threads = 16, perThread = 12
        let before = fixture.vault.commitStatistics
        let succeeded = Mutex(Set<String>())
        let duplicates = Mutex(0)
        let others = Mutex([String]())
        // Threads of their own (`concurrentPerform` runs no more at once than there are cores).
        let done = DispatchGroup()
        for thread in 0..<threads {
            done.enter()
            Thread {
                defer { done.leave() }
                for index in 0..<perThread {
                    // Threads 2k and 2k+1 add the same accounts: one of each pair wins.
                    let account = "t\(thread / 2)-\(index)"
                    do {
                        try store.add([item(account: account, service: "batch", secret: account)])
                        succeeded.withLock { _ = $0.insert(account) }
                    } catch let error as KeychainError where error.code == .duplicateItem {
                        duplicates.withLock { $0 += 1 }
                    } catch {
                        others.withLock { $0.append("\(account): \(error)") }
                    }
                }
            }.start()
        }
        done.wait()
        #expect(others.withLock { $0 }.isEmpty)
        #expect(succeeded.withLock { $0.count } == threads / 2 * perThread)
        #expect(duplicates.withLock { $0 } == threads / 2 * perThread)
        let stored = try store.find(group, limit: nil, after: nil, reading: .all).items
        #expect(stored.count == threads / 2 * perThread)
        for item in stored {
            guard case .string(let account)? = item.attributes[.account] else { continue }
            #expect(item.secret?.utf8String() == account)
        }
        let after = fixture.vault.commitStatistics
        #expect(after.writes - before.writes == UInt64(threads * perThread))
        #expect(after.commits - before.commits < UInt64(threads * perThread))
    }
}
