import Foundation
import KeychainCore
import Testing
@testable import KeychainSQLite
@testable import KeychainStore

/// SQLite keeps a KV secret's newest version in the secret's own row (its head, migration 11) and
/// the older ones in `kv_versions`; secrets written before that migration have every version in
/// `kv_versions`. What `KVConformance` checks through the store holds for both layouts; these
/// tests also look at the rows.
struct KVHeadLayoutTests {
    private let key = KVSecretKey(group: "g1", path: "app/db")
    private let now = Date(millisecondsSince1970: Date().millisecondsSince1970)

    private func metadata(current: Int, custom: [String: String] = [:]) -> KVMetadata {
        KVMetadata(
            customMetadata: custom, currentVersion: current, oldestVersion: current > 0 ? 1 : 0, createdTime: now,
            updatedTime: now)
    }

    private func version(_ number: Int, _ data: String?, deleted: Date? = nil) -> KVVersion {
        KVVersion(number: number, createdTime: now, deletionTime: deleted, data: data.map { SecretBytes(utf8: $0) })
    }

    /// Where the secret's versions are: the head's number and the numbers in `kv_versions`.
    private func layout(_ pool: ConnectionPool) throws -> (head: Int?, history: [Int]) {
        try pool.read { db in
            let head = try db.query(
                "SELECT head_version FROM kv_secrets WHERE access_group = ? AND path = ?", [.text(key.group), .text(key.path)]
            ) { $0.optionalInt64(0).map(Int.init) }.first ?? nil
            let history = try db.query(
                "SELECT version FROM kv_versions WHERE access_group = ? AND path = ? ORDER BY version",
                [.text(key.group), .text(key.path)]
            ) { Int($0.int64(0)) }
            return (head, history)
        }
    }

    private func data(_ store: any ItemStore, _ number: Int) throws -> String? {
        try store.kvVersion(number, of: key)?.data?.utf8String()
    }

    @Test func aNewVersionIsTheHeadAndTheOneBeforeItMovesToTheHistory() throws {
        let fixture = try VaultFixture()
        let pool = try #require(fixture.vault.sqlitePool)
        let store = fixture.vault.items
        try store.kvPutMetadata(metadata(current: 1), of: key)
        try store.kvPutVersion(version(1, "{\"v\":1}"), of: key)
        #expect(try layout(pool) == (1, []))
        try store.kvPutMetadata(metadata(current: 2), of: key)
        try store.kvPutVersion(version(2, "{\"v\":22}"), of: key)
        #expect(try layout(pool) == (2, [1]))
        // Rewriting a version (deleting it) leaves it where it is.
        try store.kvPutVersion(version(1, nil, deleted: now), of: key)
        try store.kvPutVersion(version(2, nil, deleted: now), of: key)
        #expect(try layout(pool) == (2, [1]))
        #expect(try store.kvVersions(of: key).map(\.number) == [1, 2])
        #expect(try store.kvVersions(of: key).allSatisfy { $0.deletionTime == now })
        #expect(try data(store, 1) == "{\"v\":1}")
        #expect(try data(store, 2) == "{\"v\":22}")
        #expect(try store.kvRead(key, version: nil)?.version?.data?.utf8String() == "{\"v\":22}")
        #expect(try store.kvRead(key, version: 1)?.version?.data?.utf8String() == "{\"v\":1}")
        #expect(try store.kvRead(key, version: 3)?.version == nil)
        // Both versions' data counted once each, and given back.
        let usage = try pool.read { try GroupUsageTable.usage(of: key.group, on: $0) }
        #expect(try store.kvRemove(key))
        #expect(try layout(pool) == (nil, []))
        let after = try pool.read { try GroupUsageTable.usage(of: key.group, on: $0) }
        #expect(usage.secretBytes - after.secretBytes == 7 + 8)
    }

    /// A secret as migration 10 left it (every version in `kv_versions`, no head) reads as before,
    /// and its next version becomes its first head.
    @Test func aSecretWrittenBeforeTheHeadKeepsItsVersionsAndGainsAHead() throws {
        let fixture = try VaultFixture()
        let pool = try #require(fixture.vault.sqlitePool)
        let store = fixture.vault.items
        for number in 1...3 {
            try store.kvPutMetadata(metadata(current: number), of: key)
            try store.kvPutVersion(version(number, "{\"v\":\(number)}"), of: key)
        }
        let usage = try pool.read { try GroupUsageTable.usage(of: key.group, on: $0) }
        _ = try pool.write { db in
            try db.execute(
                """
                INSERT INTO kv_versions (access_group, path, version, created_time, deletion_time, destroyed, data, data_bytes)
                SELECT access_group, path, head_version, head_created_time, head_deletion_time, head_destroyed, head_data,
                    head_data_bytes FROM kv_secrets;
                """)
            return try db.execute(
                """
                UPDATE kv_secrets SET head_version = NULL, head_created_time = NULL, head_deletion_time = NULL,
                    head_destroyed = NULL, head_data = NULL, head_data_bytes = NULL
                """)
        }
        #expect(try layout(pool) == (nil, [1, 2, 3]))
        #expect(try store.kvRead(key, version: nil)?.version?.data?.utf8String() == "{\"v\":3}")
        #expect(try store.kvVersions(of: key).map(\.number) == [1, 2, 3])
        #expect(try data(store, 2) == "{\"v\":2}")
        // A change to a kept version stays in `kv_versions`; the next version is the head.
        try store.kvPutVersion(version(3, nil, deleted: now), of: key)
        #expect(try layout(pool) == (nil, [1, 2, 3]))
        #expect(try store.kvVersion(3, of: key)?.deletionTime == now)
        try store.kvPutMetadata(metadata(current: 4), of: key)
        try store.kvPutVersion(version(4, "{\"v\":4}"), of: key)
        #expect(try layout(pool) == (4, [1, 2, 3]))
        #expect(try store.kvRead(key, version: nil)?.version?.data?.utf8String() == "{\"v\":4}")
        #expect(try store.kvRemoveVersions(below: 3, of: key) == 2)
        #expect(try store.kvVersions(of: key).map(\.number) == [3, 4])
        #expect(try store.kvRemoveVersions(below: 5, of: key) == 2)
        #expect(try layout(pool) == (nil, []))
        let after = try pool.read { try GroupUsageTable.usage(of: key.group, on: $0) }
        #expect(after.secretBytes == usage.secretBytes - 3 * 7)
    }

    /// A secret without custom metadata stores no box for it, and re-encryption passes it by.
    @Test func anEmptyCustomMetadataIsNoBox() throws {
        let fixture = try VaultFixture()
        let pool = try #require(fixture.vault.sqlitePool)
        let store = fixture.vault.items
        let other = KVSecretKey(group: "g1", path: "other")
        try store.kvPutMetadata(metadata(current: 0), of: key)
        try store.kvPutMetadata(metadata(current: 0, custom: ["owner": "team"]), of: other)
        let boxes = try pool.read { db in
            try db.query("SELECT path, length(custom_metadata) FROM kv_secrets ORDER BY path") { [$0.text(0): $0.int64(1)] }
        }
        #expect(boxes.first?["app/db"] == 0)
        #expect((boxes.last?["other"] ?? 0) > 0)
        #expect(try store.kvMetadata(of: key)?.customMetadata == [:])
        let reencrypting = try #require(store as? SQLiteItemStore)
        let term = try fixture.vault.keyring.rotate()
        #expect(try reencrypting.countSecrets(olderThan: term) == 1)
        #expect(try reencrypting.reencryptBatch(olderThan: term, after: 0, limit: 10)?.count == 1)
        #expect(try reencrypting.countSecrets(olderThan: term) == 0)
        #expect(try store.kvMetadata(of: other)?.customMetadata == ["owner": "team"])
    }
}
