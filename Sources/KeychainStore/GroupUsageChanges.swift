import KeychainCore

/// What one write transaction changes in each access group's usage, written to `group_usage`
/// and checked against the quota just before it commits. The check and the write it admits
/// cannot interleave with another: SQLite's writer runs one transaction at a time
/// (`BEGIN IMMEDIATE`); on PostgreSQL the group's row stays locked by the update until commit.
struct GroupUsageChanges {
    /// A group compared by its bytes, as SQLite compares it.
    private struct Group: Hashable {
        let name: String

        static func == (lhs: Group, rhs: Group) -> Bool { lhs.name.hasSameUTF8(as: rhs.name) }

        func hash(into hasher: inout Hasher) {
            name.withUTF8Bytes { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
    }

    private var changes: [Group: (items: Int64, secretBytes: Int64)] = [:]

    /// Records `items` and `secretBytes` more (or, negative, fewer) in `group`.
    mutating func record(_ group: String, items: Int64, secretBytes: Int64) {
        let old = changes[Group(name: group)] ?? (0, 0)
        changes[Group(name: group)] = (old.items + items, old.secretBytes + secretBytes)
    }

    /// Records an item deleted from `group` whose sealed secret took `sealedBytes` (0: none).
    mutating func recordDeleted(from group: String, sealedBytes: Int) {
        record(group, items: -1, secretBytes: -Int64(max(0, sealedBytes - SealedBox.overhead)))
    }

    /// The plaintext bytes of a sealed secret as stored (nil: none).
    static func secretBytes(sealed box: [UInt8]?) -> Int64 {
        box.map { Int64(max(0, $0.count - SealedBox.overhead)) } ?? 0
    }

    /// Writes the changes with `add` (which adds to a group's stored usage and returns its new
    /// totals) and refuses (errSecDiskFull) one that takes a group past `quota` in what it grows.
    func settle(
        quota: GroupQuota,
        adding add: (_ group: String, _ items: Int64, _ secretBytes: Int64) throws -> (items: Int64, secretBytes: Int64)
    ) throws {
        for (group, change) in changes where change != (0, 0) {
            let total = try add(group.name, change.items, change.secretBytes)
            if change.items > 0, let limit = quota.items, total.items > Int64(limit) {
                throw KeychainError(
                    .diskFull, "access group \"\(group.name)\" would hold \(total.items) items; its quota is \(limit) (quota.items)")
            }
            if change.secretBytes > 0, let limit = quota.secretBytes, total.secretBytes > Int64(limit) {
                throw KeychainError(
                    .diskFull,
                    "access group \"\(group.name)\" would hold \(total.secretBytes) secret bytes; its quota is \(limit) (quota.secretBytes)")
            }
        }
    }
}
