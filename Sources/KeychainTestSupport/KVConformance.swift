import Foundation
package import KeychainCore
package import KeychainStore
import Testing

/// What every store's KV operations (`KVOperations`, on the store and inside its transactions)
/// must do, checked with `#expect`: call `run(_:)` for each check from the tests of each backend
/// (the in-memory reference, SQLite, PostgreSQL).
///
/// `make` returns a new, empty store under the quota given, and what the backend gives besides
/// (nil in memory): the usage it keeps, its raw database, its re-encryption.
package struct KVConformance: Sendable {
    package struct Subject {
        package let store: any ItemStore
        /// The usage the backend keeps for a group (`group_usage`), nil where none is kept.
        package let usage: ((String) throws -> GroupUsage)?
        package let database: Database?
        package let reencryption: Reencryption?
        package let keepAlive: AnyObject?

        package init(
            store: any ItemStore, usage: ((String) throws -> GroupUsage)? = nil, database: Database? = nil,
            reencryption: Reencryption? = nil, keepAlive: AnyObject?
        ) {
            self.store = store
            self.usage = usage
            self.database = database
            self.reencryption = reencryption
            self.keepAlive = keepAlive
        }
    }

    /// The database under a store, as one who holds it (and not the master key) sees it.
    package struct Database {
        /// Every byte the database holds (its files, or its KV tables' rows as stored).
        package let rawBytes: () throws -> [UInt8]
        /// Copies one version's stored data column onto another version's row.
        package let copyData: (_ from: KVSecretKey, _ fromVersion: Int, _ to: KVSecretKey, _ toVersion: Int) throws -> Void
        /// Copies one secret's stored custom metadata column onto another secret's row.
        package let copyCustomMetadata: (_ from: KVSecretKey, _ to: KVSecretKey) throws -> Void

        package init(
            rawBytes: @escaping () throws -> [UInt8],
            copyData: @escaping (KVSecretKey, Int, KVSecretKey, Int) throws -> Void,
            copyCustomMetadata: @escaping (KVSecretKey, KVSecretKey) throws -> Void
        ) {
            self.rawBytes = rawBytes
            self.copyData = copyData
            self.copyCustomMetadata = copyCustomMetadata
        }
    }

    /// Key rotation over the store: a new term in its keyring, and the store's re-encryption.
    package struct Reencryption {
        package let rotate: () throws -> UInt32
        package let store: any ReencryptingStore

        package init(rotate: @escaping () throws -> UInt32, store: any ReencryptingStore) {
            self.rotate = rotate
            self.store = store
        }
    }

    package typealias Factory = @Sendable (GroupQuota) throws -> Subject

    let make: Factory

    package init(_ make: @escaping Factory) { self.make = make }

    package enum Check: String, CaseIterable, Sendable {
        case metadataAndVersionsRoundTrip
        case destroyedAndKeptVersions
        case aVersionNeedsItsSecretsMetadata
        case removals
        case pathsByPrefixInByteOrder
        case groupsAreApart
        case kvAndItemWritesCommitTogether
        case quota
        case sealedAtRestAndBoundToTheRow
        case reencryptionResealsKVValues
        case readsTheCurrentVersionAndEveryWriteAfter
        case metadataWithANewVersion
    }

    /// Every check, each on a store of its own.
    package func run() throws {
        for check in Check.allCases { try run(check) }
    }

    package func run(_ check: Check) throws {
        switch check {
        case .metadataAndVersionsRoundTrip: try metadataAndVersionsRoundTrip()
        case .destroyedAndKeptVersions: try destroyedAndKeptVersions()
        case .aVersionNeedsItsSecretsMetadata: try aVersionNeedsItsSecretsMetadata()
        case .removals: try removals()
        case .pathsByPrefixInByteOrder: try pathsByPrefixInByteOrder()
        case .groupsAreApart: try groupsAreApart()
        case .kvAndItemWritesCommitTogether: try kvAndItemWritesCommitTogether()
        case .quota: try quota()
        case .sealedAtRestAndBoundToTheRow: try sealedAtRestAndBoundToTheRow()
        case .reencryptionResealsKVValues: try reencryptionResealsKVValues()
        case .readsTheCurrentVersionAndEveryWriteAfter: try readsTheCurrentVersionAndEveryWriteAfter()
        case .metadataWithANewVersion: try metadataWithANewVersion()
        }
    }

    private let key = KVSecretKey(group: "g1", path: "app/db")
    private let now = Date().truncatedToMilliseconds

    private func metadata(current: Int = 0, oldest: Int = 0, custom: [String: String] = [:]) -> KVMetadata {
        KVMetadata(
            maxVersions: 5, casRequired: true, deleteVersionAfter: 3600, customMetadata: custom, currentVersion: current,
            oldestVersion: oldest, createdTime: now, updatedTime: now.addingTimeInterval(1), metadataVersion: 3)
    }

    private func version(_ number: Int, _ data: String?, deleted: Date? = nil, destroyed: Bool = false) -> KVVersion {
        KVVersion(
            number: number, createdTime: now.addingTimeInterval(Double(number)), deletionTime: deleted, destroyed: destroyed,
            data: data.map { SecretBytes(utf8: $0) })
    }

    /// Writes a secret's metadata and versions `1...count`, each in a transaction of its own.
    private func write(_ store: any ItemStore, _ key: KVSecretKey, versions count: Int, custom: [String: String] = [:]) throws {
        try store.kvPutMetadata(metadata(current: count, oldest: count > 0 ? 1 : 0, custom: custom), of: key)
        for number in stride(from: 1, through: count, by: 1) {
            try store.kvPutVersion(version(number, "{\"v\":\(number)}"), of: key)
        }
    }

    private func data(_ store: any ItemStore, _ number: Int, of key: KVSecretKey) throws -> String? {
        try store.kvVersion(number, of: key)?.data?.utf8String()
    }

    /// `kvRead` (a store may answer it from a cache): the metadata and the asked version as the
    /// separate reads give them, and every write after a read seen by the next read.
    package func readsTheCurrentVersionAndEveryWriteAfter() throws {
        let subject = try make(.unlimited)
        defer { withExtendedLifetime(subject.keepAlive) {} }
        let store = subject.store
        #expect(try store.kvRead(key, version: nil) == nil)
        try store.kvPutMetadata(metadata(current: 1), of: key)
        try store.kvPutVersion(version(1, "{\"v\":1}"), of: key)
        for _ in 0..<3 {
            let read = try #require(try store.kvRead(key, version: nil))
            #expect(read.metadata == metadata(current: 1) && read.version == version(1, "{\"v\":1}"))
        }
        try store.transaction { transaction in
            try transaction.kvPutVersion(version(2, "{\"v\":2}"), of: key)
            try transaction.kvPutMetadata(metadata(current: 2, custom: ["owner": "b"]), of: key)
        }
        let second = try #require(try store.kvRead(key, version: nil))
        #expect(second.metadata == metadata(current: 2, custom: ["owner": "b"]) && second.version == version(2, "{\"v\":2}"))
        #expect(try store.kvRead(key, version: 1)?.version == version(1, "{\"v\":1}"))
        #expect(try store.kvRead(key, version: 9).map { $0.version == nil } == true)
        try store.kvPutVersion(version(2, nil, deleted: now), of: key)
        #expect(try store.kvRead(key, version: nil)?.version == version(2, "{\"v\":2}", deleted: now))
        try store.kvRemove(key)
        #expect(try store.kvRead(key, version: nil) == nil)
    }

    package func metadataAndVersionsRoundTrip() throws {
        let subject = try make(.unlimited)
        defer { withExtendedLifetime(subject.keepAlive) {} }
        let store = subject.store
        #expect(try store.kvMetadata(of: key) == nil)
        #expect(try store.kvVersions(of: key).isEmpty)
        let custom = ["owner": "team-a", "é": "ünïcode ✓", "empty": "", "k\u{0}": "nul"]
        try store.kvPutMetadata(metadata(custom: custom), of: key)
        #expect(try store.kvMetadata(of: key) == metadata(custom: custom))
        try store.kvPutVersion(version(1, "{\"password\":\"one\"}"), of: key)
        try store.kvPutVersion(version(2, "", deleted: now), of: key)
        try store.kvPutVersion(version(3, "{\"password\":\"three\"}"), of: key)
        // Without data, oldest first; one version with its data opened, an unknown one nil.
        #expect(try store.kvVersions(of: key) == [version(1, nil), version(2, nil, deleted: now), version(3, nil)])
        #expect(try store.kvVersion(3, of: key) == version(3, "{\"password\":\"three\"}"))
        #expect(try store.kvVersion(2, of: key) == version(2, "", deleted: now))
        #expect(try store.kvVersion(4, of: key) == nil)
        // Metadata written again replaces it whole; the versions stay.
        let updated = metadata(current: 3, oldest: 1, custom: ["owner": "team-b"])
        try store.kvPutMetadata(updated, of: key)
        #expect(try store.kvMetadata(of: key) == updated)
        #expect(try store.kvVersions(of: key).count == 3)
        // Inside a transaction the same, reading its own writes.
        try store.transaction { transaction in
            try transaction.kvPutVersion(version(4, "{\"v\":4}"), of: key)
            #expect(try transaction.kvVersion(4, of: key)?.data?.utf8String() == "{\"v\":4}")
            #expect(try transaction.kvMetadata(of: key) == updated)
            #expect(try transaction.kvVersions(of: key).map(\.number) == [1, 2, 3, 4])
        }
        #expect(try data(store, 4, of: key) == "{\"v\":4}")
    }

    package func destroyedAndKeptVersions() throws {
        let subject = try make(.unlimited)
        defer { withExtendedLifetime(subject.keepAlive) {} }
        let store = subject.store
        try write(store, key, versions: 2)
        // A soft delete written without the data keeps it.
        try store.kvPutVersion(version(1, nil, deleted: now), of: key)
        #expect(try store.kvVersion(1, of: key) == version(1, "{\"v\":1}", deleted: now))
        // Undeleted, with the data read back.
        try store.kvPutVersion(version(1, "{\"v\":1}"), of: key)
        #expect(try store.kvVersion(1, of: key)?.deletionTime == nil)
        // Destroyed: no data, whatever was given.
        try store.kvPutVersion(version(2, "{\"v\":2}", destroyed: true), of: key)
        #expect(try store.kvVersion(2, of: key) == version(2, nil, destroyed: true))
        #expect(try store.kvVersions(of: key).map(\.destroyed) == [false, true])
        // A new version needs its data (unless destroyed).
        #expect(status { try store.kvPutVersion(version(3, nil), of: key) } == .param)
        #expect(try store.kvVersion(3, of: key) == nil)
        try store.kvPutVersion(version(3, nil, destroyed: true), of: key)
        #expect(try store.kvVersion(3, of: key) == version(3, nil, destroyed: true))
    }

    package func aVersionNeedsItsSecretsMetadata() throws {
        let subject = try make(.unlimited)
        defer { withExtendedLifetime(subject.keepAlive) {} }
        let store = subject.store
        #expect(status { try store.kvPutVersion(version(1, "{}"), of: key) } == .param)
        #expect(try store.kvVersions(of: key).isEmpty)
        #expect(try store.kvPaths(in: "g1", prefix: "").isEmpty)
        // Metadata in another group is another secret's.
        try store.kvPutMetadata(metadata(), of: KVSecretKey(group: "g2", path: key.path))
        #expect(status { try store.kvPutVersion(version(1, "{}"), of: key) } == .param)
    }

    package func removals() throws {
        let subject = try make(.unlimited)
        defer { withExtendedLifetime(subject.keepAlive) {} }
        let store = subject.store
        try write(store, key, versions: 5)
        #expect(try store.kvRemoveVersions(below: 3, of: key) == 2)
        #expect(try store.kvVersions(of: key).map(\.number) == [3, 4, 5])
        #expect(try store.kvVersion(1, of: key) == nil)
        #expect(try store.kvRemoveVersions(below: 3, of: key) == 0)
        // The metadata is the caller's to write.
        #expect(try store.kvMetadata(of: key)?.oldestVersion == 1)
        #expect(try store.kvRemove(key))
        #expect(try store.kvMetadata(of: key) == nil)
        #expect(try store.kvVersions(of: key).isEmpty)
        #expect(try !store.kvRemove(key))
        // A secret made again at the path starts with no versions.
        try store.kvPutMetadata(metadata(), of: key)
        #expect(try store.kvVersions(of: key).isEmpty)
        #expect(try store.kvVersion(5, of: key) == nil)
    }

    package func pathsByPrefixInByteOrder() throws {
        let subject = try make(.unlimited)
        defer { withExtendedLifetime(subject.keepAlive) {} }
        let store = subject.store
        // Unicode-equal paths of other bytes are two secrets; byte order is not any locale's.
        let paths = ["b", "a/c/d", "a", "ab", "a/b", "Zed", "é", "e\u{301}", "a/é/x", "a%", "a_b"]
        for path in paths { try store.kvPutMetadata(metadata(), of: KVSecretKey(group: "g1", path: path)) }
        try store.kvPutMetadata(metadata(), of: KVSecretKey(group: "g2", path: "a/other"))
        let byteOrder = paths.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        // Compared as bytes: `String`'s == holds "é" and "e\u{301}" equal.
        func listed(_ prefix: String) throws -> [[UInt8]] { try store.kvPaths(in: "g1", prefix: prefix).map { Array($0.utf8) } }
        func bytes(_ paths: [String]) -> [[UInt8]] { paths.map { Array($0.utf8) } }
        #expect(try listed("") == bytes(byteOrder))
        #expect(try listed("a/") == bytes(["a/b", "a/c/d", "a/é/x"]))
        #expect(try listed("a") == bytes(byteOrder.filter { $0.utf8.starts(with: "a".utf8) }))
        // LIKE's wildcards are no wildcards here.
        #expect(try listed("a%") == bytes(["a%"]))
        #expect(try listed("a_") == bytes(["a_b"]))
        #expect(try listed("e") == bytes(["e\u{301}"]))
        #expect(try listed("é") == bytes(["é"]))
        #expect(try store.kvPaths(in: "g1", prefix: "c").isEmpty)
        #expect(try store.kvPaths(in: "g2", prefix: "a") == ["a/other"])
        #expect(try store.kvPaths(in: "g3", prefix: "").isEmpty)
        try store.transaction { transaction in
            let removed = try transaction.kvRemove(KVSecretKey(group: "g1", path: "a/b"))
            #expect(removed)
            #expect(try transaction.kvPaths(in: "g1", prefix: "a/") == ["a/c/d", "a/é/x"])
        }
        #expect(try store.kvPaths(in: "g1", prefix: "a/") == ["a/c/d", "a/é/x"])
    }

    package func groupsAreApart() throws {
        let subject = try make(.unlimited)
        defer { withExtendedLifetime(subject.keepAlive) {} }
        let store = subject.store
        let other = KVSecretKey(group: "g2", path: key.path)
        try write(store, key, versions: 2, custom: ["in": "g1"])
        try write(store, other, versions: 1, custom: ["in": "g2"])
        try store.kvPutVersion(version(1, "{\"other\":true}"), of: other)
        #expect(try store.kvMetadata(of: key)?.customMetadata == ["in": "g1"])
        #expect(try store.kvMetadata(of: other)?.customMetadata == ["in": "g2"])
        #expect(try data(store, 1, of: key) == "{\"v\":1}")
        #expect(try data(store, 1, of: other) == "{\"other\":true}")
        #expect(try store.kvRemoveVersions(below: 10, of: other) == 1)
        #expect(try store.kvVersions(of: key).count == 2)
        #expect(try store.kvRemove(key))
        #expect(try store.kvMetadata(of: other) != nil)
        // A group whose name is a prefix of another's is another group.
        try store.kvPutMetadata(metadata(), of: KVSecretKey(group: "g", path: "x"))
        #expect(try store.kvPaths(in: "g", prefix: "") == ["x"])
        #expect(try store.kvPaths(in: "g2", prefix: "") == [key.path])
    }

    /// KV and item writes of one transaction commit together or not at all: the body's error,
    /// an operation's error it caught, undo both.
    package func kvAndItemWritesCommitTogether() throws {
        let subject = try make(.unlimited)
        defer { withExtendedLifetime(subject.keepAlive) {} }
        let store = subject.store
        let items = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"])
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try store.transaction { transaction in
                try transaction.add([item(account: "a")])
                try transaction.kvPutMetadata(metadata(current: 1, oldest: 1), of: key)
                try transaction.kvPutVersion(version(1, "{}"), of: key)
                throw Refused()
            }
        }
        #expect(try store.find(items, limit: nil, after: nil, reading: []).items.isEmpty)
        #expect(try store.kvMetadata(of: key) == nil)
        #expect(try store.kvVersions(of: key).isEmpty)
        // A KV operation's error, even caught, undoes the item written before it.
        let other = KVSecretKey(group: "g1", path: "no/metadata")
        #expect(status {
            try store.transaction { transaction in
                try transaction.add([item(account: "b")])
                try transaction.kvPutMetadata(metadata(), of: key)
                _ = try? transaction.kvPutVersion(version(1, "{}"), of: other)
            }
        } == .param)
        #expect(try store.find(items, limit: nil, after: nil, reading: []).items.isEmpty)
        #expect(try store.kvMetadata(of: key) == nil)
        // And an item's error undoes the KV writes before it.
        try store.add([item(account: "c")])
        #expect(status {
            try store.transaction { transaction in
                try transaction.kvPutMetadata(metadata(), of: key)
                try transaction.add([item(account: "c")])
            }
        } == .duplicateItem)
        #expect(try store.kvMetadata(of: key) == nil)
        // Committed, both are there.
        try store.transaction { transaction in
            try transaction.add([item(account: "d")])
            try transaction.kvPutMetadata(metadata(current: 1, oldest: 1), of: key)
            try transaction.kvPutVersion(version(1, "{}"), of: key)
        }
        #expect(try store.find(items, limit: nil, after: nil, reading: []).items.count == 2)
        #expect(try data(store, 1, of: key) == "{}")
    }

    /// Versions' data count in the group's secret bytes and custom metadata in its attribute
    /// bytes: a write past the quota is errSecDiskFull and changes nothing; removals give back.
    package func quota() throws {
        let subject = try make(GroupQuota(items: nil, secretBytes: 100, attributeBytes: 50))
        defer { withExtendedLifetime(subject.keepAlive) {} }
        guard let usage = subject.usage else { return }
        let store = subject.store
        func used() throws -> [Int64] {
            let usage = try usage(key.group)
            return [usage.items, usage.secretBytes, usage.attributeBytes]
        }
        let forty = ["k": String(repeating: "m", count: 39)]
        try store.kvPutMetadata(metadata(custom: forty), of: key)
        #expect(try used() == [0, 0, 40])
        let refused = #expect(throws: KeychainError.self) {
            try store.kvPutMetadata(metadata(custom: ["k": String(repeating: "m", count: 50)]), of: key)
        }
        #expect(refused?.code == .diskFull)
        #expect(refused?.detail?.contains("quota.attributeBytes") == true)
        #expect(refused?.detail?.contains("mmmm") == false)
        #expect(try store.kvMetadata(of: key)?.customMetadata == forty)
        #expect(try used() == [0, 0, 40])
        // Smaller custom metadata gives bytes back.
        try store.kvPutMetadata(metadata(custom: ["k": "v"]), of: key)
        #expect(try used() == [0, 0, 2])

        try store.kvPutVersion(version(1, String(repeating: "x", count: 60)), of: key)
        let tooMuch = #expect(throws: KeychainError.self) {
            try store.kvPutVersion(version(2, String(repeating: "y", count: 41)), of: key)
        }
        #expect(tooMuch?.code == .diskFull)
        #expect(tooMuch?.detail?.contains("quota.secretBytes") == true)
        #expect(tooMuch?.detail?.contains("yyyy") == false)
        #expect(try store.kvVersion(2, of: key) == nil)
        #expect(try used() == [0, 60, 2])
        // Refused inside a transaction with an item: neither is kept.
        #expect(status {
            try store.transaction { transaction in
                try transaction.add([item(account: "a", secret: nil)])
                try transaction.kvPutVersion(version(2, String(repeating: "y", count: 41)), of: key)
            }
        } == .diskFull)
        #expect(try store.find(ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"]), limit: nil, after: nil, reading: [])
            .items.isEmpty)
        try store.kvPutVersion(version(2, String(repeating: "y", count: 40)), of: key)
        #expect(try used() == [0, 100, 2])
        // Rewriting a version counts the difference; destroying one gives its bytes back.
        try store.kvPutVersion(version(2, String(repeating: "y", count: 30)), of: key)
        #expect(try used() == [0, 90, 2])
        try store.kvPutVersion(version(2, nil, destroyed: true), of: key)
        #expect(try used() == [0, 60, 2])
        try store.kvPutVersion(version(3, String(repeating: "z", count: 10)), of: key)
        #expect(try store.kvRemoveVersions(below: 2, of: key) == 1)
        #expect(try used() == [0, 10, 2])
        #expect(try store.kvRemove(key))
        #expect(try used() == [0, 0, 0])
    }

    /// `kvPutMetadata(_:andVersion:of:)` (how the KV rules write a version) keeps what the two
    /// writes keep: for a new secret, for the next version, and for a kept version given again
    /// (rewritten where it is); usage counts each version's data once.
    package func metadataWithANewVersion() throws {
        let subject = try make(.unlimited)
        defer { withExtendedLifetime(subject.keepAlive) {} }
        let store = subject.store
        let first = metadata(current: 1, oldest: 1, custom: ["a": "b"])
        try store.transaction { try $0.kvPutMetadata(first, andVersion: version(1, "{\"v\":1}"), of: key) }
        #expect(try store.kvMetadata(of: key) == first)
        #expect(try data(store, 1, of: key) == "{\"v\":1}")
        let second = metadata(current: 2, oldest: 1)
        try store.transaction { try $0.kvPutMetadata(second, andVersion: version(2, "{\"v\":22}"), of: key) }
        #expect(try store.kvMetadata(of: key) == second)
        #expect(try store.kvVersions(of: key) == [version(1, nil), version(2, nil)])
        #expect(try [1, 2].map { try data(store, $0, of: key) } == ["{\"v\":1}", "{\"v\":22}"])
        #expect(try store.kvRead(key, version: nil)?.version?.data?.utf8String() == "{\"v\":22}")
        try store.transaction { try $0.kvPutMetadata(second, andVersion: version(1, nil, deleted: now), of: key) }
        #expect(try store.kvVersion(1, of: key) == version(1, "{\"v\":1}", deleted: now))
        #expect(try store.kvVersions(of: key).map(\.number) == [1, 2])
        // A version without data for a new number is refused, and nothing of the write is kept.
        #expect(status {
            try store.transaction { try $0.kvPutMetadata(metadata(current: 3, oldest: 1), andVersion: version(3, nil), of: key) }
        } == .param)
        #expect(try store.kvMetadata(of: key) == second)
        if let usage = subject.usage {
            let used = try usage(key.group)
            #expect([used.items, used.secretBytes, used.attributeBytes] == [0, 15, 0])
        }
    }

    /// Nothing a client wrote is in the database in clear, and a sealed value copied to another
    /// row (another version, another secret) fails to open (errSecDecode).
    package func sealedAtRestAndBoundToTheRow() throws {
        let subject = try make(.unlimited)
        defer { withExtendedLifetime(subject.keepAlive) {} }
        guard let database = subject.database else { return }
        let store = subject.store
        let other = KVSecretKey(group: "g1", path: "app/other")
        let moved = KVSecretKey(group: "g2", path: key.path)
        for secret in [key, other, moved] {
            try store.kvPutMetadata(metadata(current: 2, oldest: 1, custom: ["note": "custom-\(secret.group)-marker"]), of: secret)
            try store.kvPutVersion(version(1, "{\"password\":\"data-\(secret.group)-one-marker\"}"), of: secret)
            try store.kvPutVersion(version(2, "{\"password\":\"data-\(secret.group)-two-marker\"}"), of: secret)
        }
        let raw = try database.rawBytes()
        for marker in ["custom-g1-marker", "data-g1-one-marker", "data-g1-two-marker", "data-g2-one-marker"] {
            #expect(!raw.contains(Array(marker.utf8)), "\(marker) is in the database in clear")
        }
        #expect(raw.contains(Array(key.path.utf8)), "the raw bytes are the database's")
        try database.copyData(key, 1, key, 2)
        #expect(status { try store.kvVersion(2, of: key) } == .decode)
        try database.copyData(key, 1, other, 1)
        #expect(status { try store.kvVersion(1, of: other) } == .decode)
        try database.copyData(key, 1, moved, 1)
        #expect(status { try store.kvVersion(1, of: moved) } == .decode)
        try database.copyCustomMetadata(key, other)
        #expect(status { try store.kvMetadata(of: other) } == .decode)
        #expect(status { try store.transaction { try $0.kvMetadata(of: other) } } == .decode)
        // The rows left alone still open.
        #expect(try data(store, 1, of: key) == "{\"password\":\"data-g1-one-marker\"}")
        #expect(try store.kvMetadata(of: key)?.customMetadata == ["note": "custom-g1-marker"])
    }

    /// Re-encryption re-seals every KV value (versions' data, custom metadata) under the new
    /// term, in batches; until it has, the old term is kept.
    package func reencryptionResealsKVValues() throws {
        let subject = try make(.unlimited)
        defer { withExtendedLifetime(subject.keepAlive) {} }
        guard let reencryption = subject.reencryption else { return }
        let store = subject.store
        let other = KVSecretKey(group: "g2", path: "other")
        try write(store, key, versions: 3, custom: ["a": "b"])
        try write(store, other, versions: 1)
        try store.kvPutVersion(version(2, nil, destroyed: true), of: key)
        let term = try reencryption.rotate()
        // One secret's custom metadata (the other's is empty: no box), three versions' data (the
        // destroyed one has none).
        #expect(try reencryption.store.countSecrets(olderThan: term) == 4)
        #expect(try reencryption.store.retireTerms(olderThan: term) == [])
        var batches = 0
        while let (last, count) = try reencryption.store.reencryptBatch(olderThan: term, after: 0, limit: 2) {
            #expect(last == 0 && count <= 2)
            batches += 1
            if batches > 10 { break }
        }
        #expect(batches == 2)
        #expect(try reencryption.store.countSecrets(olderThan: term) == 0)
        #expect(try reencryption.store.retireTerms(olderThan: term) == Array(1..<term))
        #expect(try store.kvMetadata(of: key)?.customMetadata == ["a": "b"])
        #expect(try [1, 2, 3].map { try data(store, $0, of: key) } == ["{\"v\":1}", nil, "{\"v\":3}"])
        #expect(try data(store, 1, of: other) == "{\"v\":1}")
    }
}
