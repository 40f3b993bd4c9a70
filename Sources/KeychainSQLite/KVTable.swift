import Foundation
import KeychainCore
import KeychainStore

/// The KV tables (migration 6): `kv_secrets`, a secret's metadata with its custom metadata sealed,
/// and `kv_versions`, its kept versions with their data sealed. Every statement on them is here;
/// each runs on the connection it is given, inside the caller's transaction when it writes. Holds
/// no key: the transaction seals and opens (`SQLiteItemTransaction+KV`), this reads and writes
/// the rows, and answers the sealed bytes' sizes so that usage moves without unsealing.
enum KVTable {
    /// A secret's row as stored, its custom metadata still sealed.
    struct SecretRow {
        var metadata: KVMetadata
        let sealedCustomMetadata: [UInt8]
        /// What the custom metadata counts for: 0 when there is none (nothing to open).
        let customMetadataBytes: Int64
    }

    // MARK: Reading

    private static let secretColumns = """
        max_versions, cas_required, delete_version_after, custom_metadata, current_version, oldest_version,
        created_time, updated_time, metadata_version, custom_metadata_bytes
        """

    static func secret(_ key: KVSecretKey, on db: SQLiteConnection) throws -> SecretRow? {
        try db.query(
            "SELECT \(secretColumns) FROM kv_secrets WHERE access_group = ? AND path = ?", [.text(key.group), .text(key.path)]
        ) { row in secretRow(row) }.first
    }

    /// The secret's row from the first columns of `row`, as `secretColumns` names them.
    private static func secretRow(_ row: SQLiteStatement) -> SecretRow {
        SecretRow(
            metadata: KVMetadata(
                maxVersions: Int(row.int64(0)), casRequired: row.int64(1) != 0, deleteVersionAfter: Int(row.int64(2)),
                currentVersion: Int(row.int64(4)), oldestVersion: Int(row.int64(5)),
                createdTime: Date(millisecondsSince1970: row.int64(6)), updatedTime: Date(millisecondsSince1970: row.int64(7)),
                metadataVersion: Int(row.int64(8))),
            sealedCustomMetadata: row.blob(3), customMetadataBytes: row.int64(9))
    }

    /// `secretColumns` of the table `s`, as the read joining `kv_versions` names them.
    private static let joinedSecretColumns = secretColumns.split(separator: ",")
        .map { "s." + $0.trimmingCharacters(in: .whitespacesAndNewlines) }.joined(separator: ", ")

    /// A secret's row and one version's (`number`, or the current one when nil; nil when that
    /// version is not kept), in one statement: the read of `data/<path>`.
    static func read(_ key: KVSecretKey, version number: Int?, on db: SQLiteConnection) throws -> (SecretRow, VersionRow?)? {
        try db.query(
            """
            SELECT \(joinedSecretColumns), v.version, v.created_time, v.deletion_time, v.destroyed, v.data,
                v.data_bytes
            FROM kv_secrets s LEFT JOIN kv_versions v ON v.access_group = s.access_group AND v.path = s.path
                AND v.version = coalesce(?, s.current_version)
            WHERE s.access_group = ? AND s.path = ?
            """,
            [number.map { .integer(Int64($0)) } ?? .null, .text(key.group), .text(key.path)]
        ) { row -> (SecretRow, VersionRow?) in
            let secret = secretRow(row)
            guard !row.isNull(10) else { return (secret, nil) }
            let version = KVVersion(
                number: Int(row.int64(10)), createdTime: Date(millisecondsSince1970: row.int64(11)),
                deletionTime: row.optionalInt64(12).map(Date.init(millisecondsSince1970:)), destroyed: row.int64(13) != 0,
                data: nil)
            return (secret, VersionRow(version: version, sealedData: row.isNull(14) ? nil : row.blob(14), dataBytes: row.int64(15)))
        }.first
    }

    /// What a version's write needs to know, in one statement: whether the secret exists (nil:
    /// it does not), and the version's stored data and bytes (nil: not stored yet).
    static func versionToReplace(_ number: Int, of key: KVSecretKey, on db: SQLiteConnection) throws
        -> (box: [UInt8]?, bytes: Int64)??
    {
        try db.query(
            """
            SELECT v.version, v.data, v.data_bytes FROM kv_secrets s
            LEFT JOIN kv_versions v ON v.access_group = s.access_group AND v.path = s.path AND v.version = ?
            WHERE s.access_group = ? AND s.path = ?
            """,
            [.integer(Int64(number)), .text(key.group), .text(key.path)]
        ) { row -> (box: [UInt8]?, bytes: Int64)? in
            row.isNull(0) ? nil : (row.isNull(1) ? nil : row.blob(1), row.int64(2))
        }.first
    }

    /// The bytes a secret's custom metadata counts for; nil when there is no such secret.
    static func customMetadataBytes(of key: KVSecretKey, on db: SQLiteConnection) throws -> Int64? {
        try db.query(
            "SELECT custom_metadata_bytes FROM kv_secrets WHERE access_group = ? AND path = ?", [.text(key.group), .text(key.path)]
        ) { $0.int64(0) }.first
    }

    /// Every kept version of the secret, oldest first, without data.
    static func versions(of key: KVSecretKey, on db: SQLiteConnection) throws -> [KVVersion] {
        try db.query(
            """
            SELECT version, created_time, deletion_time, destroyed FROM kv_versions
            WHERE access_group = ? AND path = ? ORDER BY version
            """,
            [.text(key.group), .text(key.path)]
        ) { row in
            KVVersion(
                number: Int(row.int64(0)), createdTime: Date(millisecondsSince1970: row.int64(1)),
                deletionTime: row.optionalInt64(2).map(Date.init(millisecondsSince1970:)), destroyed: row.int64(3) != 0,
                data: nil)
        }
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

    static func version(_ number: Int, of key: KVSecretKey, on db: SQLiteConnection) throws -> VersionRow? {
        try db.query(
            """
            SELECT created_time, deletion_time, destroyed, data, data_bytes FROM kv_versions
            WHERE access_group = ? AND path = ? AND version = ?
            """,
            [.text(key.group), .text(key.path), .integer(Int64(number))]
        ) { row in
            let version = KVVersion(
                number: number, createdTime: Date(millisecondsSince1970: row.int64(0)),
                deletionTime: row.optionalInt64(1).map(Date.init(millisecondsSince1970:)), destroyed: row.int64(2) != 0,
                data: nil)
            return VersionRow(version: version, sealedData: row.isNull(3) ? nil : row.blob(3), dataBytes: row.int64(4))
        }.first
    }

    /// The paths of the group's secrets that begin with `prefix`, in ascending byte order (TEXT
    /// compares by its bytes; the prefix is compared as bytes too, as `substr` on text counts
    /// characters).
    static func paths(in group: String, prefix: String, on db: SQLiteConnection) throws -> [String] {
        try db.query(
            """
            SELECT path FROM kv_secrets
            WHERE access_group = ? AND path >= ? AND substr(CAST(path AS BLOB), 1, ?) = ? ORDER BY path
            """,
            [.text(group), .text(prefix), .integer(Int64(prefix.utf8.count)), .blob(Array(prefix.utf8))]
        ) { $0.text(0) }
    }

    // MARK: Writing

    /// Inserts or replaces the secret's row.
    static func putSecret(
        _ metadata: KVMetadata, sealedCustomMetadata: [UInt8], customMetadataBytes: Int64, of key: KVSecretKey,
        on db: SQLiteConnection
    ) throws {
        try db.execute(
            """
            INSERT OR REPLACE INTO kv_secrets (access_group, path, \(secretColumns))
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(key.group), .text(key.path), .integer(Int64(metadata.maxVersions)), .integer(metadata.casRequired ? 1 : 0),
                .integer(Int64(metadata.deleteVersionAfter)), .blob(sealedCustomMetadata), .integer(Int64(metadata.currentVersion)),
                .integer(Int64(metadata.oldestVersion)), .integer(metadata.createdTime.millisecondsSince1970),
                .integer(metadata.updatedTime.millisecondsSince1970), .integer(Int64(metadata.metadataVersion)),
                .integer(customMetadataBytes),
            ])
    }

    /// Inserts or replaces a version's row, its data sealed as `sealedData` (nil: none).
    static func putVersion(
        _ version: KVVersion, sealedData: [UInt8]?, dataBytes: Int64, of key: KVSecretKey, on db: SQLiteConnection
    ) throws {
        try db.execute(
            """
            INSERT OR REPLACE INTO kv_versions
                (access_group, path, version, created_time, deletion_time, destroyed, data, data_bytes)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(key.group), .text(key.path), .integer(Int64(version.number)), .integer(version.createdTime.millisecondsSince1970),
                version.deletionTime.map { .integer($0.millisecondsSince1970) } ?? .null, .integer(version.destroyed ? 1 : 0),
                sealedData.map(SQLiteValue.blob) ?? .null, .integer(dataBytes),
            ])
    }

    /// Deletes the secret's versions numbered below `number` (every one without it); returns how
    /// many and their data's bytes.
    static func deleteVersions(below number: Int? = nil, of key: KVSecretKey, on db: SQLiteConnection) throws
        -> (count: Int, dataBytes: Int64)
    {
        let removed = try db.query(
            "DELETE FROM kv_versions WHERE access_group = ? AND path = ? AND version < ? RETURNING data_bytes",
            [.text(key.group), .text(key.path), .integer(number.map(Int64.init) ?? .max)]
        ) { $0.int64(0) }
        return (removed.count, removed.reduce(0, +))
    }

    /// Deletes the secret's row; returns its custom metadata's bytes, nil when there was none.
    static func deleteSecret(_ key: KVSecretKey, on db: SQLiteConnection) throws -> Int64? {
        try db.query(
            "DELETE FROM kv_secrets WHERE access_group = ? AND path = ? RETURNING custom_metadata_bytes",
            [.text(key.group), .text(key.path)]
        ) { $0.int64(0) }.first
    }

    // MARK: Re-encryption

    /// A sealed column's term, as a blob whose order is term order (`SealedBox.termStart`).
    private static func term(of column: String) -> String {
        "substr(\(column), \(SealedBox.termStart), \(SealedBox.termLength))"
    }

    private static func termBlob(_ term: UInt32) -> SQLiteValue { .blob(SealedBox.termKey(term)) }

    /// How many sealed values (versions' data, secrets' custom metadata) are sealed under a term
    /// older than `term`.
    static func countSealed(olderThan term: UInt32, on db: SQLiteConnection) throws -> Int {
        Int(try db.scalarInt(
            """
            SELECT (SELECT count(*) FROM kv_versions WHERE data IS NOT NULL AND \(Self.term(of: "data")) < ?)
                + (SELECT count(*) FROM kv_secrets WHERE \(Self.term(of: "custom_metadata")) < ?)
            """,
            [termBlob(term), termBlob(term)]) ?? 0)
    }

    /// Whether any value is sealed under `term`.
    static func hasSealed(underTerm term: UInt32, on db: SQLiteConnection) throws -> Bool {
        try db.scalarInt(
            """
            SELECT EXISTS (SELECT 1 FROM kv_versions WHERE data IS NOT NULL AND \(Self.term(of: "data")) = ?)
                OR EXISTS (SELECT 1 FROM kv_secrets WHERE \(Self.term(of: "custom_metadata")) = ?)
            """,
            [termBlob(term), termBlob(term)]) == 1
    }

    /// Up to `limit` values sealed under a term older than `term`: versions' data first, then
    /// secrets' custom metadata. Re-sealed, a value leaves this selection, so no cursor is needed.
    static func sealed(olderThan term: UInt32, limit: Int, on db: SQLiteConnection) throws -> [KVSealedValue] {
        var values = try db.query(
            """
            SELECT access_group, path, version, data FROM kv_versions
            WHERE data IS NOT NULL AND \(Self.term(of: "data")) < ? LIMIT ?
            """,
            [termBlob(term), .integer(Int64(limit))]
        ) { row in
            KVSealedValue(key: KVSecretKey(group: row.text(0), path: row.text(1)), version: Int(row.int64(2)), box: row.blob(3))
        }
        guard values.count < limit else { return values }
        values += try db.query(
            "SELECT access_group, path, custom_metadata FROM kv_secrets WHERE \(Self.term(of: "custom_metadata")) < ? LIMIT ?",
            [termBlob(term), .integer(Int64(limit - values.count))]
        ) { row in KVSealedValue(key: KVSecretKey(group: row.text(0), path: row.text(1)), version: nil, box: row.blob(2)) }
        return values
    }

    /// Replaces a sealed value's box.
    static func replace(_ value: KVSealedValue, with box: [UInt8], on db: SQLiteConnection) throws {
        let key: [SQLiteValue] = [.text(value.key.group), .text(value.key.path)]
        if let version = value.version {
            try db.execute(
                "UPDATE kv_versions SET data = ? WHERE access_group = ? AND path = ? AND version = ?",
                [.blob(box)] + key + [.integer(Int64(version))])
        } else {
            try db.execute("UPDATE kv_secrets SET custom_metadata = ? WHERE access_group = ? AND path = ?", [.blob(box)] + key)
        }
    }
}
