package import KeychainCore

/// What one access group holds, as `group_usage` keeps it and `GroupQuota` bounds it; as a
/// change, any part may be negative.
package struct GroupUsage: Equatable {
    package var items: Int64 = 0
    /// The secrets' plaintext bytes.
    package var secretBytes: Int64 = 0
    /// `AttributeValue.storedBytes` of every attribute value.
    package var attributeBytes: Int64 = 0

    package static let zero = GroupUsage()

    /// What one stored item counts for, its secret `secretBytes` long.
    package init(item attributes: [Attribute: AttributeValue], secretBytes: Int64) {
        self.init(items: 1, secretBytes: secretBytes, attributeBytes: Int64(AttributeValue.storedBytes(of: attributes)))
    }

    package init(items: Int64 = 0, secretBytes: Int64 = 0, attributeBytes: Int64 = 0) {
        self.items = items
        self.secretBytes = secretBytes
        self.attributeBytes = attributeBytes
    }

    package static func + (lhs: GroupUsage, rhs: GroupUsage) -> GroupUsage {
        GroupUsage(
            items: lhs.items + rhs.items, secretBytes: lhs.secretBytes + rhs.secretBytes,
            attributeBytes: lhs.attributeBytes + rhs.attributeBytes)
    }

    package static prefix func - (usage: GroupUsage) -> GroupUsage {
        GroupUsage(items: -usage.items, secretBytes: -usage.secretBytes, attributeBytes: -usage.attributeBytes)
    }
}

/// What one write transaction changes in each access group's usage, written to `group_usage`
/// and checked against the quota just before it commits. The check and the write it admits
/// cannot interleave with another: SQLite's writer runs one transaction at a time
/// (`BEGIN IMMEDIATE`); on PostgreSQL the group's row stays locked by the update until commit.
package struct GroupUsageChanges {
    /// A group compared by its bytes, as SQLite compares it.
    private struct Group: Hashable {
        let name: String

        static func == (lhs: Group, rhs: Group) -> Bool { lhs.name.hasSameUTF8(as: rhs.name) }

        func hash(into hasher: inout Hasher) {
            name.withUTF8Bytes { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
    }

    private var changes: [Group: GroupUsage] = [:]

    package init() {}

    /// Records `change` in `group` (negative parts: less).
    package mutating func record(_ group: String, _ change: GroupUsage) {
        changes[Group(name: group), default: .zero] = changes[Group(name: group), default: .zero] + change
    }

    /// Records an item added to `group`.
    package mutating func recordAdded(_ item: Item, to group: String) {
        record(group, GroupUsage(item: item.attributes, secretBytes: Int64(item.secret?.count ?? 0)))
    }

    /// Records an item deleted from `group` whose sealed secret took `sealedBytes` (0: none) and
    /// whose attributes were `attributes`.
    package mutating func recordDeleted(from group: String, attributes: [Attribute: AttributeValue], sealedBytes: Int) {
        record(group, -GroupUsage(item: attributes, secretBytes: Int64(max(0, sealedBytes - SealedBox.overhead))))
    }

    /// The plaintext bytes of a sealed secret as stored (nil: none).
    package static func secretBytes(sealed box: [UInt8]?) -> Int64 {
        box.map { Int64(max(0, $0.count - SealedBox.overhead)) } ?? 0
    }

    /// Writes the changes with `add` (which adds to a group's stored usage and returns its new
    /// totals) and refuses (errSecDiskFull) one that takes a group past `quota` in what it grows.
    package func settle(quota: GroupQuota, adding add: (_ group: String, _ change: GroupUsage) throws -> GroupUsage) throws {
        for (group, change) in changes where change != .zero {
            try Self.check(change, total: try add(group.name, change), of: group.name, against: quota)
        }
    }

    /// errSecDiskFull when `change` takes `group` to `total`, past `quota` in what it grows.
    fileprivate static func check(_ change: GroupUsage, total: GroupUsage, of group: String, against quota: GroupQuota) throws {
        if change.items > 0, let limit = quota.items, total.items > Int64(limit) {
            throw KeychainError(
                .diskFull, "access group \"\(group)\" would hold \(total.items) items; its quota is \(limit) (quota.items)")
        }
        if change.secretBytes > 0, let limit = quota.secretBytes, total.secretBytes > Int64(limit) {
            throw KeychainError(
                .diskFull,
                "access group \"\(group)\" would hold \(total.secretBytes) secret bytes; its quota is \(limit) (quota.secretBytes)")
        }
        if change.attributeBytes > 0, let limit = quota.attributeBytes, total.attributeBytes > Int64(limit) {
            throw KeychainError(
                .diskFull,
                "access group \"\(group)\" would hold \(total.attributeBytes) attribute bytes; its quota is \(limit) (quota.attributeBytes)")
        }
    }

    /// Adds `other`'s changes to these.
    fileprivate mutating func merge(_ other: GroupUsageChanges) {
        for (group, change) in other.changes { changes[group, default: .zero] = changes[group, default: .zero] + change }
    }

    /// What these changes hold for `group` (zero: none).
    fileprivate func change(of group: String) -> GroupUsage { changes[Group(name: group)] ?? .zero }

    fileprivate var nonZero: [(group: String, change: GroupUsage)] {
        changes.compactMap { $0.value == .zero ? nil : ($0.key.name, $0.value) }
    }
}

/// The usage changes of a batch of writes committed in one transaction (SQLite's group commit):
/// each write is checked against the quota on the totals the writes admitted before it leave, as
/// if each had settled its own changes, and the batch writes each group's row once, at its end,
/// instead of once per write.
package struct BatchedGroupUsage {
    /// Each group's usage as stored before the batch, read once (as a change from zero).
    private var stored = GroupUsageChanges()
    /// The groups read (few per batch), compared by bytes: a `Set` would take two groups whose
    /// names are canonically equivalent for one.
    private var groupsRead: [String] = []
    private var admitted = GroupUsageChanges()

    package init() {}

    /// Adds `write`'s changes, or throws errSecDiskFull (adding nothing) when `write` takes a
    /// group past `quota` in what it grows. `read` reads a group's stored usage.
    package mutating func admit(_ write: GroupUsageChanges, quota: GroupQuota, read: (_ group: String) throws -> GroupUsage) throws {
        for (group, change) in write.nonZero {
            if !isRead(group) {
                stored.record(group, try read(group))
                groupsRead.append(group)
            }
            let total = stored.change(of: group) + admitted.change(of: group) + change
            try GroupUsageChanges.check(change, total: total, of: group, against: quota)
        }
        admitted.merge(write)
    }

    /// Whether `group`'s stored usage was read (compared by bytes, as groups are).
    private func isRead(_ group: String) -> Bool { groupsRead.contains { $0.hasSameUTF8(as: group) } }

    /// Writes each group's changes with `add` (which adds to a group's stored usage).
    package func settle(adding add: (_ group: String, _ change: GroupUsage) throws -> Void) throws {
        for (group, change) in admitted.nonZero { try add(group, change) }
    }
}
