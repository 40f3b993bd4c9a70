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
            let total = try add(group.name, change)
            if change.items > 0, let limit = quota.items, total.items > Int64(limit) {
                throw KeychainError(
                    .diskFull, "access group \"\(group.name)\" would hold \(total.items) items; its quota is \(limit) (quota.items)")
            }
            if change.secretBytes > 0, let limit = quota.secretBytes, total.secretBytes > Int64(limit) {
                throw KeychainError(
                    .diskFull,
                    "access group \"\(group.name)\" would hold \(total.secretBytes) secret bytes; its quota is \(limit) (quota.secretBytes)")
            }
            if change.attributeBytes > 0, let limit = quota.attributeBytes, total.attributeBytes > Int64(limit) {
                throw KeychainError(
                    .diskFull,
                    "access group \"\(group.name)\" would hold \(total.attributeBytes) attribute bytes; its quota is \(limit) (quota.attributeBytes)")
            }
        }
    }
}
