import Foundation
package import KeychainCore
package import KeychainStore
import Synchronization
import Testing

/// What every backend's `ItemStore` must do with a `GroupQuota`, checked with `#expect`: refuse
/// (errSecDiskFull, nothing changed) what would take an access group past its items, secret bytes
/// or attribute bytes, let through what does not grow it, move usage with the items, and keep the
/// usage it stores equal to what it holds, also under concurrent writers. Call `run()` from one
/// test per backend that meters usage (SQLite, PostgreSQL).
///
/// `make` returns a new, empty database with a store over it under the quota given, and the usage
/// the backend keeps for a group (`GroupUsage`, as its table holds it).
package struct GroupQuotaConformance: Sendable {
    package struct Subject {
        package let store: any ItemStore
        /// Another store over the same database under another quota (a restart with other settings).
        package let withQuota: (GroupQuota) throws -> any ItemStore
        package let usage: (String) throws -> GroupUsage
        package let keepAlive: AnyObject?

        package init(
            store: any ItemStore, withQuota: @escaping (GroupQuota) throws -> any ItemStore,
            usage: @escaping (String) throws -> GroupUsage, keepAlive: AnyObject?
        ) {
            self.store = store
            self.withQuota = withQuota
            self.usage = usage
            self.keepAlive = keepAlive
        }
    }

    package typealias Factory = @Sendable (GroupQuota) throws -> Subject

    let make: Factory

    package init(_ make: @escaping Factory) { self.make = make }

    package func run() throws {
        try anAddPastTheItemQuotaIsDiskFullAndChangesNothing()
        try anAddPastTheByteQuotaIsDiskFull()
        try updatesThatDoNotGrowTheGroupAreNotRefused()
        try deletesAndMovesFreeQuota()
        try attributesCountAgainstTheAttributeQuota()
        try theQuotaIsExactUnderConcurrentWriters()
    }

    private func secret(_ count: Int) -> String { String(repeating: "x", count: count) }

    private func inGroup(_ group: String, account: String? = nil) -> ItemFilter {
        ItemFilter(
            itemClass: .genericPassword, accessGroups: [group], equal: account.map { [.account: .string($0)] } ?? [:])
    }

    /// What the store holds in `group`, read back (every class): the usage it must keep.
    private func counted(_ group: String, in store: any ItemStore) throws -> GroupUsage {
        var usage = GroupUsage()
        for itemClass in ItemClass.storedClasses {
            let items = try store.find(
                ItemFilter(itemClass: itemClass, accessGroups: [group]), limit: nil, after: nil, reading: .all
            ).items
            usage.items += Int64(items.count)
            usage.secretBytes += items.reduce(0) { $0 + Int64($1.secret?.count ?? 0) }
            usage.attributeBytes += items.reduce(0) { $0 + Int64(AttributeValue.storedBytes(of: $1.attributes)) }
        }
        return usage
    }

    /// The usage kept for each group is what the store holds there.
    private func expectKeptIsCounted(_ subject: Subject, _ groups: [String] = ["g1", "g2"]) throws {
        for group in groups {
            #expect(try subject.usage(group) == counted(group, in: subject.store), "group \(group)")
        }
    }

    package func anAddPastTheItemQuotaIsDiskFullAndChangesNothing() throws {
        let subject = try make(GroupQuota(items: 3, secretBytes: nil))
        let store = subject.store
        try store.add([item(account: "a"), item(account: "b")])
        // A batch that would pass the quota adds none of its items.
        #expect(status { try store.add([item(account: "c"), item(account: "d")]) } == .diskFull)
        try store.add([item(account: "c")])
        #expect(status { try store.add([item(account: "d")]) } == .diskFull)
        #expect(try store.find(inGroup("g1"), limit: nil, after: nil, reading: []).items.count == 3)
        // Another group has a quota of its own.
        try store.add((0..<3).map { item(account: "a\($0)", group: "g2") })
        let kept = try subject.usage("g1")
        #expect([kept.items, kept.secretBytes] == [3, 18])
        try expectKeptIsCounted(subject)
    }

    package func anAddPastTheByteQuotaIsDiskFull() throws {
        let subject = try make(GroupQuota(items: nil, secretBytes: 100))
        let store = subject.store
        try store.add([item(account: "a", secret: secret(60))])
        let refused = #expect(throws: KeychainError.self) { try store.add([item(account: "b", secret: secret(41))]) }
        #expect(refused?.code == .diskFull)
        #expect(refused?.detail?.contains("quota.secretBytes") == true)
        #expect(refused?.detail?.contains("xxxx") == false)
        try store.add([item(account: "b", secret: secret(40))])  // exactly the quota
        // Attributes do not count against it, and an item without a secret adds none.
        try store.add([item(account: "c", label: secret(500), secret: nil)])
        let kept = try subject.usage("g1")
        #expect([kept.items, kept.secretBytes] == [3, 100])
        try expectKeptIsCounted(subject)
    }

    package func updatesThatDoNotGrowTheGroupAreNotRefused() throws {
        let subject = try make(GroupQuota(items: nil, secretBytes: 100))
        let store = subject.store
        try store.add([item(account: "a", secret: secret(100))])
        let changes = { (text: String) in ItemChanges(secret: SecretBytes(utf8: text), modificationDate: Date()) }
        #expect(status { try store.update(inGroup("g1"), with: changes(secret(101))) } == .diskFull)
        #expect(try store.update(inGroup("g1"), with: changes(secret(10))) == 1)
        #expect(try subject.usage("g1").secretBytes == 10)
        #expect(try store.update(inGroup("g1"), with: changes(secret(100))) == 1)
        // Under a lower quota (a restart with a smaller quota.secretBytes) the group is over it:
        // what does not grow it still goes through, what grows it does not.
        let lowered = try subject.withQuota(GroupQuota(items: nil, secretBytes: 50))
        #expect(try lowered.update(inGroup("g1"), with: changes(secret(80))) == 1)
        let rename = ItemChanges(attributes: [.label: .string("renamed")], modificationDate: Date())
        #expect(try lowered.update(inGroup("g1"), with: rename) == 1)
        #expect(status { try lowered.update(inGroup("g1"), with: changes(secret(81))) } == .diskFull)
        #expect(status { try lowered.add([item(account: "b", secret: secret(1))]) } == .diskFull)
        let kept = try subject.usage("g1")
        #expect([kept.items, kept.secretBytes] == [1, 80])
        try expectKeptIsCounted(subject)
    }

    package func deletesAndMovesFreeQuota() throws {
        let subject = try make(GroupQuota(items: 2, secretBytes: 20))
        let store = subject.store
        try store.add([item(account: "a", secret: secret(10)), item(account: "b", secret: secret(10))])
        #expect(status { try store.add([item(account: "c", secret: nil)]) } == .diskFull)
        #expect(try store.delete(inGroup("g1", account: "a")) == 1)
        try store.add([item(account: "c", secret: secret(10))])
        // Moving an item to another group moves its usage; the target's quota applies.
        let move = ItemChanges(attributes: [.accessGroup: .string("g2")], modificationDate: Date())
        #expect(try store.update(inGroup("g1", account: "b"), with: move) == 1)
        #expect([try subject.usage("g1").items, try subject.usage("g2").items] == [1, 1])
        try store.add([item(account: "d", group: "g2", secret: secret(10))])
        #expect(status { try store.update(inGroup("g1", account: "c"), with: move) } == .diskFull)
        // A refused transaction leaves the usage as it was.
        try expectKeptIsCounted(subject)
    }

    /// Attributes count in `quota.attributeBytes`; adds and updates that grow past it change
    /// nothing, moves carry the bytes, deletes free them.
    package func attributesCountAgainstTheAttributeQuota() throws {
        let subject = try make(GroupQuota(items: nil, secretBytes: 100, attributeBytes: 1000))
        let store = subject.store
        try store.add([item(account: "a", label: secret(600), secret: nil)])
        let used = try subject.usage("g1").attributeBytes
        #expect(used > 600)
        let refused = #expect(throws: KeychainError.self) { try store.add([item(account: "b", label: secret(600))]) }
        #expect(refused?.code == .diskFull)
        #expect(refused?.detail?.contains("quota.attributeBytes") == true)
        let grow = ItemChanges(attributes: [.comment: .string(secret(900))], modificationDate: Date())
        #expect(status { try store.update(inGroup("g1"), with: grow) } == .diskFull)
        #expect(try store.find(inGroup("g1"), limit: nil, after: nil, reading: .attributes).items.first?[.comment] == nil)
        #expect(try subject.usage("g1").attributeBytes == used)
        let shrink = ItemChanges(attributes: [.label: .string("short"), .comment: .string(secret(300))], modificationDate: Date())
        #expect(try store.update(inGroup("g1"), with: shrink) == 1)
        #expect(try subject.usage("g1").attributeBytes == used - 595 + 300)
        let move = ItemChanges(attributes: [.accessGroup: .string("g2")], modificationDate: Date())
        #expect(try store.update(inGroup("g1"), with: move) == 1)
        #expect(try subject.usage("g1").attributeBytes == 0)
        try expectKeptIsCounted(subject)
        #expect(try store.delete(ItemFilter(itemClass: .genericPassword, accessGroups: ["g2"])) == 1)
        #expect(try subject.usage("g2") == GroupUsage())
    }

    /// Writers on many threads: exactly the quota's worth of adds succeed, no more.
    package func theQuotaIsExactUnderConcurrentWriters() throws {
        let subject = try make(GroupQuota(items: 100, secretBytes: nil))
        let store = subject.store
        let added = Atomic(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<40 where (try? store.add([item(account: "t\(thread)-\(index)", secret: "s")])) != nil {
                added.add(1, ordering: .relaxed)
            }
        }
        #expect(added.load(ordering: .relaxed) == 100)
        let kept = try subject.usage("g1")
        #expect([kept.items, kept.secretBytes] == [100, 100])
        try expectKeptIsCounted(subject)
    }
}
