import Foundation
import KeychainCore
import KeychainStore

/// The KV tables on PostgreSQL (migration 7), as `KVTable` on SQLite: `kv_secrets` (metadata,
/// custom metadata sealed) and `kv_versions` (kept versions, data sealed), group and path in the
/// "C" collation (byte order). Holds no key: the transaction seals and opens.
enum PGKVTable {
    /// A secret's row as stored, its custom metadata still sealed.
    struct SecretRow {
        var metadata: KVMetadata
        let sealedCustomMetadata: [UInt8]
        /// What the custom metadata counts for: 0 when there is none (nothing to open).
        let customMetadataBytes: Int64
    }

    /// A version's row as stored, its data still sealed.
    struct VersionRow {
        /// Without its data.
        let version: KVVersion
        /// Nil once destroyed.
        let sealedData: [UInt8]?
        /// What the data counts for in the group's secret bytes.
        let dataBytes: Int64
    }

    private static func key(_ key: KVSecretKey) -> [PGValue] { [.text(key.group), .text(key.path)] }

    /// Takes the secret's lock until the caller's transaction ends, so that KV transactions on one
    /// secret run one after the other on every node (a check-and-set reads and writes atomically,
    /// and two first writes of one secret do not both insert it).
    static func lock(_ key: KVSecretKey, on db: PGConnection) throws {
        try db.execute("SELECT pg_advisory_xact_lock(hashtext('keychaind:kv'), hashtext($1 || '/' || $2))", Self.key(key))
    }

    // MARK: Reading

    private static let secretColumns = """
        max_versions, cas_required, delete_version_after, custom_metadata, current_version, oldest_version,
        created_time, updated_time, metadata_version, custom_metadata_bytes
        """

    static func secret(_ key: KVSecretKey, on db: PGConnection) throws -> SecretRow? {
        let rows = try db.execute("SELECT \(secretColumns) FROM kv_secrets WHERE access_group = $1 AND path = $2", Self.key(key))
        guard rows.count == 1 else { return nil }
        return SecretRow(
            metadata: KVMetadata(
                maxVersions: Int(rows.int64(0, 0)), casRequired: rows.bool(0, 1), deleteVersionAfter: Int(rows.int64(0, 2)),
                currentVersion: Int(rows.int64(0, 4)), oldestVersion: Int(rows.int64(0, 5)),
                createdTime: Date(millisecondsSince1970: rows.int64(0, 6)), updatedTime: Date(millisecondsSince1970: rows.int64(0, 7)),
                metadataVersion: Int(rows.int64(0, 8))),
            sealedCustomMetadata: rows.bytes(0, 3), customMetadataBytes: rows.int64(0, 9))
    }

    /// The bytes a secret's custom metadata counts for; nil when there is no such secret.
    static func customMetadataBytes(of key: KVSecretKey, on db: PGConnection) throws -> Int64? {
        let rows = try db.execute(
            "SELECT custom_metadata_bytes FROM kv_secrets WHERE access_group = $1 AND path = $2", Self.key(key))
        return rows.count == 1 ? rows.int64(0, 0) : nil
    }

    /// Every kept version of the secret, oldest first, without data.
    static func versions(of key: KVSecretKey, on db: PGConnection) throws -> [KVVersion] {
        let rows = try db.execute(
            """
            SELECT version, created_time, deletion_time, destroyed FROM kv_versions
            WHERE access_group = $1 AND path = $2 ORDER BY version
            """,
            Self.key(key))
        return (0..<rows.count).map { row in
            KVVersion(
                number: Int(rows.int64(row, 0)), createdTime: Date(millisecondsSince1970: rows.int64(row, 1)),
                deletionTime: rows.optionalInt64(row, 2).map(Date.init(millisecondsSince1970:)), destroyed: rows.bool(row, 3),
                data: nil)
        }
    }

    static func version(_ number: Int, of key: KVSecretKey, on db: PGConnection) throws -> VersionRow? {
        let rows = try db.execute(
            """
            SELECT created_time, deletion_time, destroyed, data, data_bytes FROM kv_versions
            WHERE access_group = $1 AND path = $2 AND version = $3
            """,
            Self.key(key) + [.int8(Int64(number))])
        guard rows.count == 1 else { return nil }
        let version = KVVersion(
            number: number, createdTime: Date(millisecondsSince1970: rows.int64(0, 0)),
            deletionTime: rows.optionalInt64(0, 1).map(Date.init(millisecondsSince1970:)), destroyed: rows.bool(0, 2), data: nil)
        return VersionRow(version: version, sealedData: rows.isNull(0, 3) ? nil : rows.bytes(0, 3), dataBytes: rows.int64(0, 4))
    }

    /// The paths of the group's secrets that begin with `prefix`, in ascending byte order (the
    /// "C" collation), read along the primary key from `prefix` on.
    static func paths(in group: String, prefix: String, on db: PGConnection) throws -> [String] {
        let rows = try db.execute(
            "SELECT path FROM kv_secrets WHERE access_group = $1 AND path >= $2 AND starts_with(path, $2) ORDER BY path",
            [.text(group), .text(prefix)])
        return (0..<rows.count).map { rows.text($0, 0) }
    }

    // MARK: Writing

    /// Inserts or replaces the secret's row.
    static func putSecret(
        _ metadata: KVMetadata, sealedCustomMetadata: [UInt8], customMetadataBytes: Int64, of key: KVSecretKey,
        on db: PGConnection
    ) throws {
        try db.execute(
            """
            INSERT INTO kv_secrets (access_group, path, \(secretColumns))
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
            ON CONFLICT (access_group, path) DO UPDATE SET
                max_versions = excluded.max_versions, cas_required = excluded.cas_required,
                delete_version_after = excluded.delete_version_after, custom_metadata = excluded.custom_metadata,
                current_version = excluded.current_version, oldest_version = excluded.oldest_version,
                created_time = excluded.created_time, updated_time = excluded.updated_time,
                metadata_version = excluded.metadata_version, custom_metadata_bytes = excluded.custom_metadata_bytes
            """,
            Self.key(key) + [
                .int8(Int64(metadata.maxVersions)), .bool(metadata.casRequired), .int8(Int64(metadata.deleteVersionAfter)),
                .bytea(sealedCustomMetadata), .int8(Int64(metadata.currentVersion)), .int8(Int64(metadata.oldestVersion)),
                .int8(metadata.createdTime.millisecondsSince1970), .int8(metadata.updatedTime.millisecondsSince1970),
                .int8(Int64(metadata.metadataVersion)), .int8(customMetadataBytes),
            ])
    }

    /// Inserts or replaces a version's row, its data sealed as `sealedData` (nil: none).
    static func putVersion(
        _ version: KVVersion, sealedData: [UInt8]?, dataBytes: Int64, of key: KVSecretKey, on db: PGConnection
    ) throws {
        try db.execute(
            """
            INSERT INTO kv_versions (access_group, path, version, created_time, deletion_time, destroyed, data, data_bytes)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            ON CONFLICT (access_group, path, version) DO UPDATE SET
                created_time = excluded.created_time, deletion_time = excluded.deletion_time,
                destroyed = excluded.destroyed, data = excluded.data, data_bytes = excluded.data_bytes
            """,
            Self.key(key) + [
                .int8(Int64(version.number)), .int8(version.createdTime.millisecondsSince1970),
                version.deletionTime.map { .int8($0.millisecondsSince1970) } ?? .null, .bool(version.destroyed),
                sealedData.map(PGValue.bytea) ?? .null, .int8(dataBytes),
            ])
    }

    /// Deletes the secret's versions numbered below `number` (every one without it); returns how
    /// many and their data's bytes.
    static func deleteVersions(below number: Int? = nil, of key: KVSecretKey, on db: PGConnection) throws
        -> (count: Int, dataBytes: Int64)
    {
        let rows = try db.execute(
            "DELETE FROM kv_versions WHERE access_group = $1 AND path = $2 AND version < $3 RETURNING data_bytes",
            Self.key(key) + [.int8(number.map(Int64.init) ?? .max)])
        return (rows.count, (0..<rows.count).reduce(0) { $0 + rows.int64($1, 0) })
    }

    /// Deletes the secret's row; returns its custom metadata's bytes, nil when there was none.
    static func deleteSecret(_ key: KVSecretKey, on db: PGConnection) throws -> Int64? {
        let rows = try db.execute(
            "DELETE FROM kv_secrets WHERE access_group = $1 AND path = $2 RETURNING custom_metadata_bytes", Self.key(key))
        return rows.count == 1 ? rows.int64(0, 0) : nil
    }

    // MARK: Re-encryption

    /// A sealed column's term, as bytes whose order is term order (`SealedBox.termStart`).
    private static func term(of column: String) -> String {
        "substring(\(column) FROM \(SealedBox.termStart) FOR \(SealedBox.termLength))"
    }

    /// How many values (versions' data, secrets' custom metadata; an empty one is no box) are
    /// sealed under a term older than `term`.
    static func countSealed(olderThan term: UInt32, on db: PGConnection) throws -> Int {
        Int(try db.execute(
            """
            SELECT (SELECT count(*) FROM kv_versions WHERE data IS NOT NULL AND \(Self.term(of: "data")) < $1)
                + (SELECT count(*) FROM kv_secrets WHERE length(custom_metadata) > 0 AND \(Self.term(of: "custom_metadata")) < $1)
            """,
            [.bytea(SealedBox.termKey(term))]
        ).int64(0, 0))
    }

    /// Whether any value is sealed under `term`.
    static func hasSealed(underTerm term: UInt32, on db: PGConnection) throws -> Bool {
        try db.execute(
            """
            SELECT EXISTS (SELECT 1 FROM kv_versions WHERE data IS NOT NULL AND \(Self.term(of: "data")) = $1)
                OR EXISTS (SELECT 1 FROM kv_secrets WHERE length(custom_metadata) > 0 AND \(Self.term(of: "custom_metadata")) = $1)
            """,
            [.bytea(SealedBox.termKey(term))]
        ).bool(0, 0)
    }

    /// Up to `limit` values sealed under a term older than `term`, their rows locked: versions'
    /// data first, then secrets' custom metadata. Re-sealed, a value leaves this selection.
    static func sealed(olderThan term: UInt32, limit: Int, on db: PGConnection) throws -> [KVSealedValue] {
        let versions = try db.execute(
            """
            SELECT access_group, path, version, data FROM kv_versions
            WHERE data IS NOT NULL AND \(Self.term(of: "data")) < $1 LIMIT $2 FOR UPDATE
            """,
            [.bytea(SealedBox.termKey(term)), .int8(Int64(limit))])
        var values = (0..<versions.count).map { row in
            KVSealedValue(
                key: KVSecretKey(group: versions.text(row, 0), path: versions.text(row, 1)),
                version: Int(versions.int64(row, 2)), box: versions.bytes(row, 3))
        }
        guard values.count < limit else { return values }
        let secrets = try db.execute(
            """
            SELECT access_group, path, custom_metadata FROM kv_secrets
            WHERE length(custom_metadata) > 0 AND \(Self.term(of: "custom_metadata")) < $1 LIMIT $2 FOR UPDATE
            """,
            [.bytea(SealedBox.termKey(term)), .int8(Int64(limit - values.count))])
        values += (0..<secrets.count).map { row in
            KVSealedValue(
                key: KVSecretKey(group: secrets.text(row, 0), path: secrets.text(row, 1)), version: nil, box: secrets.bytes(row, 2))
        }
        return values
    }

    /// Replaces a sealed value's box.
    static func replace(_ value: KVSealedValue, with box: [UInt8], on db: PGConnection) throws {
        if let version = value.version {
            try db.execute(
                "UPDATE kv_versions SET data = $1 WHERE access_group = $2 AND path = $3 AND version = $4",
                [.bytea(box)] + key(value.key) + [.int8(Int64(version))])
        } else {
            try db.execute(
                "UPDATE kv_secrets SET custom_metadata = $1 WHERE access_group = $2 AND path = $3", [.bytea(box)] + key(value.key))
        }
    }
}
