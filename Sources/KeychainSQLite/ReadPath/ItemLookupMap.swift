import KeychainConcurrency
import KeychainCore
import Synchronization
import KeychainStore

/// Every stored item's row (`seq`), kept in memory under a hash of its class, access group and
/// lookup attributes (`ItemColumns.leadingLookup`: a generic password's service and account, …). A
/// find that names all of them reads its few candidate rows by `seq`, one B-tree walk (the
/// table's) instead of two, and a find with no candidate reads nothing (docs/decisions.md,
/// "Lookup map in memory"). The group is part of the key so that a find reads only rows of the
/// groups it may see: another tenant's rows under the same service and account cost it nothing
/// (docs/decisions.md, "The lookup map is keyed by access group").
///
/// A superset of the truth, never less: a row is added inside the transaction that writes it (so
/// before any reader can see it) and removed only once the transaction that deletes or re-keys it
/// has committed, unless that transaction added a row under the same key and `seq`. A candidate
/// that does not match (a rolled-back add, a hash-tag collision, a row removed while the map was
/// being built) costs one read by `seq`, whose SQL still compares every attribute the find names.
///
/// Open addressing with linear probing over `UInt64` slots, 8 bytes each, at most 3/4 full (16 MiB
/// at 1M items): the row in the low 32 bits, the key's top 32 bits (its tag) above them. The tag
/// alone places a slot, so the table can grow without the full keys; a pair of keys shares a tag
/// once in 2^32 pairs (at 1M keys ~116 pairs do, each costing its finds one extra read). Behind
/// a plain mutex held for one probe: it is taken only by finds that the find cache did not answer.
final class ItemLookupMap: Sendable {
    /// The attributes a key is made of, in this order: the access group, then the class's lookup
    /// attributes (made once per class: a key is made on every find the find cache misses).
    static func keyAttributes(of itemClass: ItemClass) -> [Attribute] {
        switch itemClass {
        case .genericPassword: keyAttributesOfGenericPasswords
        case .internetPassword: keyAttributesOfInternetPasswords
        case .certificate, .identity: keyAttributesOfCertificates
        case .key: keyAttributesOfKeys
        }
    }

    private static let keyAttributesOfGenericPasswords = [.accessGroup] + ItemColumns.leadingLookup(of: .genericPassword)
    private static let keyAttributesOfInternetPasswords = [.accessGroup] + ItemColumns.leadingLookup(of: .internetPassword)
    private static let keyAttributesOfCertificates = [.accessGroup] + ItemColumns.leadingLookup(of: .certificate)
    private static let keyAttributesOfKeys = [.accessGroup] + ItemColumns.leadingLookup(of: .key)

    /// A hash of an item's class and the SQL values of its access group and lookup attributes.
    struct Key: Hashable {
        let hash: UInt64

        /// The key of an item of `itemClass` whose key attributes hold `values`, in
        /// `keyAttributes(of:)` order; `.null` (absent) counts as the attribute's default, as the
        /// lookup index and the finds' `ifnull(…)` comparisons read it.
        init(_ itemClass: ItemClass, _ values: [SQLiteValue]) {
            var hasher = Hasher()
            hasher.combine(itemClass.code)
            for (attribute, value) in zip(ItemLookupMap.keyAttributes(of: itemClass), values) {
                // SQL's `=` on these values: same storage class, same bytes (strings as UTF-8,
                // not Swift's canonical equivalence).
                switch value == .null ? Schema.defaultValue(attribute) : value {
                case .null: hasher.combine(0 as UInt8)
                case .integer(let number):
                    hasher.combine(1 as UInt8)
                    hasher.combine(number)
                case .text(let text):
                    hasher.combine(2 as UInt8)
                    text.withUTF8Bytes { bytes in
                        hasher.combine(bytes.count)
                        hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
                    }
                case .blob(let bytes):
                    hasher.combine(3 as UInt8)
                    hasher.combine(bytes.count)
                    bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
                }
            }
            hash = UInt64(UInt(bitPattern: hasher.finalize()))
        }

        init(hash: UInt64) { self.hash = hash }
    }

    /// A row listed under a key.
    struct Entry: Hashable {
        let key: Key
        let seq: Int64
    }

    private struct Table {
        var slots: [UInt64]
        /// Slots holding a row or a tombstone.
        var used = 0
        var live = 0
        /// False once a row too large to encode was seen: the map is then never consulted.
        var usable = true
    }

    static let empty: UInt64 = 0
    static let tombstone: UInt64 = .max
    static let seqBits = 32
    static let seqMask: UInt64 = (1 << seqBits) - 1
    /// Rows are numbered from 1 (SQLite's rowids), and the all-ones value is the tombstone.
    static let largestSeq = Int64(seqMask - 1)
    static let minimumCapacity = 1024

    private let table = PThreadLocked(Table(slots: Array(repeating: ItemLookupMap.empty, count: ItemLookupMap.minimumCapacity)))
    private let complete = Atomic<Bool>(false)

    /// Whether every row is listed: finds consult the map only from then on.
    var isComplete: Bool { complete.load(ordering: .acquiring) }

    /// Called once the rows present when the map was made have all been added.
    func markComplete() { complete.store(true, ordering: .releasing) }

    /// How many rows the map lists.
    var count: Int { table.withLock { $0.live } }

    /// Lists `seq` under `key` (no change when it is already there).
    func add(_ key: Key, seq: Int64) {
        table.withLock { table in Self.insert(key, seq: seq, into: &table) }
    }

    func add(_ rows: [Entry]) {
        table.withLock { table in
            for row in rows { Self.insert(row.key, seq: row.seq, into: &table) }
        }
    }

    /// Removes `seq` from under `key`; for rows whose deletion or change of key has committed.
    func remove(_ rows: some Collection<Entry>) {
        guard !rows.isEmpty else { return }
        table.withLock { table in
            guard table.usable else { return }
            let mask = table.slots.count - 1
            for row in rows where (1...Self.largestSeq).contains(row.seq) {
                let value = Self.value(row.key, seq: row.seq)
                var index = Self.start(of: value, capacity: table.slots.count)
                while table.slots[index] != Self.empty {
                    if table.slots[index] == value {
                        table.slots[index] = Self.tombstone
                        table.live -= 1
                        break
                    }
                    index = (index + 1) & mask
                }
            }
        }
    }

    /// The rows listed under any of `keys` (a find's, one per access group it may see), in
    /// ascending order, each once; nil when the map is not complete (being built) or was given
    /// up, and the find must use the lookup index.
    func candidates(for keys: [Key]) -> [Int64]? {
        guard isComplete else { return nil }
        let found = table.withLock { table -> [Int64]? in
            guard table.usable else { return nil }
            let mask = table.slots.count - 1
            var found: [Int64] = []
            for key in keys {
                let tag = key.hash & ~Self.seqMask
                var index = Self.start(of: tag, capacity: table.slots.count)
                while table.slots[index] != Self.empty {
                    let slot = table.slots[index]
                    if slot != Self.tombstone, slot & ~Self.seqMask == tag { found.append(Int64(slot & Self.seqMask)) }
                    index = (index + 1) & mask
                }
            }
            return found
        }
        guard var found, found.count > 1 else { return found }
        // A row being re-keyed is listed under its old and new key until its transaction ends.
        found.sort()
        var last: Int64 = 0
        found.removeAll { seq in
            defer { last = seq }
            return seq == last
        }
        return found
    }

    // MARK: Slots

    private static func value(_ key: Key, seq: Int64) -> UInt64 { (key.hash & ~seqMask) | UInt64(seq) }

    /// Where a slot's probe starts: its tag scaled to the table (a power of two, at most 2^32 slots).
    private static func start(of slot: UInt64, capacity: Int) -> Int { Int(((slot >> seqBits) &* UInt64(capacity)) >> 32) }

    private static func insert(_ key: Key, seq: Int64, into table: inout Table) {
        guard table.usable else { return }
        guard (1...largestSeq).contains(seq) else {
            table = Table(slots: [empty], usable: false)
            return
        }
        if (table.used + 1) * 4 > table.slots.count * 3 { rehash(&table) }
        let value = value(key, seq: seq)
        let mask = table.slots.count - 1
        var index = start(of: value, capacity: table.slots.count)
        var reusable: Int?
        while table.slots[index] != empty {
            if table.slots[index] == value { return }
            if table.slots[index] == tombstone, reusable == nil { reusable = index }
            index = (index + 1) & mask
        }
        if let reusable {
            table.slots[reusable] = value
        } else {
            table.slots[index] = value
            table.used += 1
        }
        table.live += 1
    }

    /// Rebuilds the slots without tombstones, at twice the size when more than half would be in use.
    private static func rehash(_ table: inout Table) {
        var capacity = minimumCapacity
        while (table.live + 1) * 2 > capacity { capacity *= 2 }
        let old = table.slots
        table.slots = Array(repeating: empty, count: capacity)
        table.used = table.live
        let mask = capacity - 1
        for slot in old where slot != empty && slot != tombstone {
            var index = start(of: slot, capacity: capacity)
            while table.slots[index] != empty { index = (index + 1) & mask }
            table.slots[index] = slot
        }
    }
}
