import Foundation
import KeychainCore
import KeychainStore

/// The KV tables (migrations 6 and 11): `kv_secrets`, a secret's metadata with its custom metadata
/// sealed and its newest version (the head, its data sealed), and `kv_versions`, its older kept
/// versions with their data sealed. A version is in one place only: the head is written where a new
/// version goes, and moves to `kv_versions` when a newer one arrives; a secret written before
/// migration 11 has every version in `kv_versions` until its next one. Every statement on them is here;
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

    /// The version columns of a head (`kv_secrets`) or of a `kv_versions` row, in the order
    /// `versionRow` reads them.
    private static let headColumns = "head_version, head_created_time, head_deletion_time, head_destroyed, head_data, head_data_bytes"
    private static let historyColumns = "version, created_time, deletion_time, destroyed, data, data_bytes"

    /// The version at `column` of `row` and the five after it, as `headColumns` and
    /// `historyColumns` name them; nil when its number is NULL (no such version there).
    private static func versionRow(_ row: SQLiteStatement, at column: Int32) -> VersionRow? {
        guard !row.isNull(column) else { return nil }
        let version = KVVersion(
            number: Int(row.int64(column)), createdTime: Date(millisecondsSince1970: row.int64(column + 1)),
            deletionTime: row.optionalInt64(column + 2).map(Date.init(millisecondsSince1970:)), destroyed: row.int64(column + 3) != 0,
            data: nil)
        return VersionRow(
            version: version, sealedData: row.isNull(column + 4) ? nil : row.blob(column + 4), dataBytes: row.int64(column + 5))
    }

    /// A secret's row and one version's (`number`, or the current one when nil; nil when that
    /// version is not kept), in one statement: the read of `data/<path>`. The current version is
    /// usually the head, in the secret's own row.
    static func read(_ key: KVSecretKey, version number: Int?, on db: SQLiteConnection) throws -> (SecretRow, VersionRow?)? {
        try db.query(
            """
            SELECT \(joinedSecretColumns), s.head_version, s.head_created_time, s.head_deletion_time, s.head_destroyed,
                s.head_data, s.head_data_bytes, v.version, v.created_time, v.deletion_time, v.destroyed, v.data, v.data_bytes
            FROM kv_secrets s LEFT JOIN kv_versions v ON v.access_group = s.access_group AND v.path = s.path
                AND v.version = coalesce(?1, s.current_version)
            WHERE s.access_group = ?2 AND s.path = ?3
            """,
            [number.map { .integer(Int64($0)) } ?? .null, .text(key.group), .text(key.path)]
        ) { row -> (SecretRow, VersionRow?) in
            let secret = secretRow(row)
            let wanted = number ?? secret.metadata.currentVersion
            if let head = versionRow(row, at: 10), head.version.number == wanted { return (secret, head) }
            return (secret, versionRow(row, at: 16))
        }.first
    }

    /// Where a version's write goes, and what is stored there now.
    struct VersionPlace {
        enum Target {
            /// The secret's row: the version is its head, or becomes it (the head before it, if
            /// any, older, moving to `kv_versions` first: `displacesHead`).
            case head(displacesHead: Bool)
            /// `kv_versions`: a version older than the head, or kept there from before migration 11.
            case history
        }
        let target: Target
        /// The version's stored data and bytes; nil when it is not stored yet.
        let stored: (box: [UInt8]?, bytes: Int64)?
        /// What the secret's custom metadata counts for now.
        let customMetadataBytes: Int64
    }

    /// Where version `number`'s write goes, in one statement; nil when the secret does not exist.
    /// A version not stored yet is the newest (a secret's versions are made in order), so it
    /// becomes the head; a stored one is rewritten where it is.
    static func place(ofVersion number: Int, of key: KVSecretKey, on db: SQLiteConnection) throws -> VersionPlace? {
        try db.query(
            """
            SELECT s.head_version, s.head_data, s.head_data_bytes, v.version, v.data, v.data_bytes, s.custom_metadata_bytes
            FROM kv_secrets s
            LEFT JOIN kv_versions v ON v.access_group = s.access_group AND v.path = s.path AND v.version = ?
            WHERE s.access_group = ? AND s.path = ?
            """,
            [.integer(Int64(number)), .text(key.group), .text(key.path)]
        ) { row -> VersionPlace in
            let customMetadataBytes = row.int64(6)
            let head = row.isNull(0) ? nil : Int(row.int64(0))
            let (target, stored): (VersionPlace.Target, (box: [UInt8]?, bytes: Int64)?) =
                if head == number {
                    (.head(displacesHead: false), (row.isNull(1) ? nil : row.blob(1), row.int64(2)))
                } else if !row.isNull(3) {
                    (.history, (row.isNull(4) ? nil : row.blob(4), row.int64(5)))
                } else if let head {
                    (number > head ? .head(displacesHead: true) : .history, nil)
                } else {
                    (.head(displacesHead: false), nil)
                }
            return VersionPlace(target: target, stored: stored, customMetadataBytes: customMetadataBytes)
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
            SELECT version, created_time, deletion_time, destroyed FROM kv_versions WHERE access_group = ?1 AND path = ?2
            UNION ALL
            SELECT head_version, head_created_time, head_deletion_time, head_destroyed FROM kv_secrets
            WHERE access_group = ?1 AND path = ?2 AND head_version IS NOT NULL
            ORDER BY 1
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
            SELECT \(historyColumns) FROM kv_versions WHERE access_group = ?1 AND path = ?2 AND version = ?3
            UNION ALL
            SELECT \(headColumns) FROM kv_secrets WHERE access_group = ?1 AND path = ?2 AND head_version = ?3
            """,
            [.text(key.group), .text(key.path), .integer(Int64(number))]
        ) { row in versionRow(row, at: 0) }.first ?? nil
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

    private static let metadataUpdate = """
        max_versions = excluded.max_versions, cas_required = excluded.cas_required,
        delete_version_after = excluded.delete_version_after, custom_metadata = excluded.custom_metadata,
        current_version = excluded.current_version, oldest_version = excluded.oldest_version,
        created_time = excluded.created_time, updated_time = excluded.updated_time,
        metadata_version = excluded.metadata_version, custom_metadata_bytes = excluded.custom_metadata_bytes
        """

    /// Inserts the secret's row or replaces its metadata; with `head`, its head too (else the head
    /// stays as it is).
    static func putSecret(
        _ metadata: KVMetadata, sealedCustomMetadata: [UInt8], customMetadataBytes: Int64,
        head: (version: KVVersion, sealedData: [UInt8]?, dataBytes: Int64)? = nil, of key: KVSecretKey, on db: SQLiteConnection
    ) throws {
        var values: [SQLiteValue] = [
            .text(key.group), .text(key.path), .integer(Int64(metadata.maxVersions)), .integer(metadata.casRequired ? 1 : 0),
            .integer(Int64(metadata.deleteVersionAfter)), .blob(sealedCustomMetadata), .integer(Int64(metadata.currentVersion)),
            .integer(Int64(metadata.oldestVersion)), .integer(metadata.createdTime.millisecondsSince1970),
            .integer(metadata.updatedTime.millisecondsSince1970), .integer(Int64(metadata.metadataVersion)),
            .integer(customMetadataBytes),
        ]
        guard let head else {
            try db.execute(
                """
                INSERT INTO kv_secrets (access_group, path, \(secretColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (access_group, path) DO UPDATE SET \(metadataUpdate)
                """,
                values)
            return
        }
        values += headValues(head.version, sealedData: head.sealedData, dataBytes: head.dataBytes)
        try db.execute(
            """
            INSERT INTO kv_secrets (access_group, path, \(secretColumns), \(headColumns))
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (access_group, path) DO UPDATE SET \(metadataUpdate), head_version = excluded.head_version,
                head_created_time = excluded.head_created_time, head_deletion_time = excluded.head_deletion_time,
                head_destroyed = excluded.head_destroyed, head_data = excluded.head_data,
                head_data_bytes = excluded.head_data_bytes
            """,
            values)
    }

    /// A head's values, in `headColumns`' order.
    private static func headValues(_ version: KVVersion, sealedData: [UInt8]?, dataBytes: Int64) -> [SQLiteValue] {
        [
            .integer(Int64(version.number)), .integer(version.createdTime.millisecondsSince1970),
            version.deletionTime.map { .integer($0.millisecondsSince1970) } ?? .null, .integer(version.destroyed ? 1 : 0),
            sealedData.map(SQLiteValue.blob) ?? .null, .integer(dataBytes),
        ]
    }

    /// Writes the secret's head, its data sealed as `sealedData` (nil: none).
    static func putHead(
        _ version: KVVersion, sealedData: [UInt8]?, dataBytes: Int64, of key: KVSecretKey, on db: SQLiteConnection
    ) throws {
        try db.execute(
            """
            UPDATE kv_secrets SET head_version = ?, head_created_time = ?, head_deletion_time = ?, head_destroyed = ?,
                head_data = ?, head_data_bytes = ?
            WHERE access_group = ? AND path = ?
            """,
            headValues(version, sealedData: sealedData, dataBytes: dataBytes) + [.text(key.group), .text(key.path)])
    }

    /// Moves the secret's head (if any) to `kv_versions`, as it is (its data's binding names the
    /// version, not the table it is in).
    static func moveHeadToHistory(of key: KVSecretKey, on db: SQLiteConnection) throws {
        try db.execute(
            """
            INSERT OR REPLACE INTO kv_versions (access_group, path, \(historyColumns))
            SELECT access_group, path, \(headColumns) FROM kv_secrets
            WHERE access_group = ? AND path = ? AND head_version IS NOT NULL
            """,
            [.text(key.group), .text(key.path)])
    }

    /// Inserts or replaces a version's row in `kv_versions`, its data sealed as `sealedData` (nil: none).
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

    /// Deletes the secret's versions numbered below `number` (every one without it), the head
    /// too when it is; returns how many and their data's bytes.
    static func deleteVersions(below number: Int? = nil, of key: KVSecretKey, on db: SQLiteConnection) throws
        -> (count: Int, dataBytes: Int64)
    {
        let values: [SQLiteValue] = [.text(key.group), .text(key.path), .integer(number.map(Int64.init) ?? .max)]
        var removed = try db.query(
            "DELETE FROM kv_versions WHERE access_group = ? AND path = ? AND version < ? RETURNING data_bytes", values
        ) { $0.int64(0) }
        let head = try db.query(
            "SELECT head_data_bytes FROM kv_secrets WHERE access_group = ? AND path = ? AND head_version < ?", values
        ) { $0.int64(0) }
        if !head.isEmpty {
            try db.execute(
                """
                UPDATE kv_secrets SET head_version = NULL, head_created_time = NULL, head_deletion_time = NULL,
                    head_destroyed = NULL, head_data = NULL, head_data_bytes = NULL
                WHERE access_group = ? AND path = ?
                """,
                [.text(key.group), .text(key.path)])
            removed += head
        }
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

    /// The sealed values' conditions: versions' data in `kv_versions` and in heads, and custom
    /// metadata (an empty one is stored as no box at all).
    private static let sealedHistory = "data IS NOT NULL AND \(term(of: "data"))"
    private static let sealedHead = "head_data IS NOT NULL AND \(term(of: "head_data"))"
    private static let sealedCustomMetadata = "length(custom_metadata) > 0 AND \(term(of: "custom_metadata"))"

    /// How many sealed values (versions' data, secrets' custom metadata) are sealed under a term
    /// older than `term`.
    static func countSealed(olderThan term: UInt32, on db: SQLiteConnection) throws -> Int {
        Int(try db.scalarInt(
            """
            SELECT (SELECT count(*) FROM kv_versions WHERE \(sealedHistory) < ?1)
                + (SELECT count(*) FROM kv_secrets WHERE \(sealedHead) < ?1)
                + (SELECT count(*) FROM kv_secrets WHERE \(sealedCustomMetadata) < ?1)
            """,
            [termBlob(term)]) ?? 0)
    }

    /// Whether any value is sealed under `term`.
    static func hasSealed(underTerm term: UInt32, on db: SQLiteConnection) throws -> Bool {
        try db.scalarInt(
            """
            SELECT EXISTS (SELECT 1 FROM kv_versions WHERE \(sealedHistory) = ?1)
                OR EXISTS (SELECT 1 FROM kv_secrets WHERE \(sealedHead) = ?1)
                OR EXISTS (SELECT 1 FROM kv_secrets WHERE \(sealedCustomMetadata) = ?1)
            """,
            [termBlob(term)]) == 1
    }

    /// Up to `limit` values sealed under a term older than `term`: versions' data first (in
    /// `kv_versions`, then heads), then secrets' custom metadata. Re-sealed, a value leaves this
    /// selection, so no cursor is needed.
    static func sealed(olderThan term: UInt32, limit: Int, on db: SQLiteConnection) throws -> [KVSealedValue] {
        var values = try db.query(
            "SELECT access_group, path, version, data FROM kv_versions WHERE \(sealedHistory) < ? LIMIT ?",
            [termBlob(term), .integer(Int64(limit))]
        ) { row in
            KVSealedValue(key: KVSecretKey(group: row.text(0), path: row.text(1)), version: Int(row.int64(2)), box: row.blob(3))
        }
        guard values.count < limit else { return values }
        values += try db.query(
            "SELECT access_group, path, head_version, head_data FROM kv_secrets WHERE \(sealedHead) < ? LIMIT ?",
            [termBlob(term), .integer(Int64(limit - values.count))]
        ) { row in
            KVSealedValue(key: KVSecretKey(group: row.text(0), path: row.text(1)), version: Int(row.int64(2)), box: row.blob(3))
        }
        guard values.count < limit else { return values }
        values += try db.query(
            "SELECT access_group, path, custom_metadata FROM kv_secrets WHERE \(sealedCustomMetadata) < ? LIMIT ?",
            [termBlob(term), .integer(Int64(limit - values.count))]
        ) { row in KVSealedValue(key: KVSecretKey(group: row.text(0), path: row.text(1)), version: nil, box: row.blob(2)) }
        return values
    }

    /// Replaces a sealed value's box (a version's wherever it is).
    static func replace(_ value: KVSealedValue, with box: [UInt8], on db: SQLiteConnection) throws {
        let key: [SQLiteValue] = [.text(value.key.group), .text(value.key.path)]
        if let version = value.version {
            let number: SQLiteValue = .integer(Int64(version))
            let changed = try db.execute(
                "UPDATE kv_versions SET data = ? WHERE access_group = ? AND path = ? AND version = ?", [.blob(box)] + key + [number])
            if changed == 0 {
                try db.execute(
                    "UPDATE kv_secrets SET head_data = ? WHERE access_group = ? AND path = ? AND head_version = ?",
                    [.blob(box)] + key + [number])
            }
        } else {
            try db.execute("UPDATE kv_secrets SET custom_metadata = ? WHERE access_group = ? AND path = ?", [.blob(box)] + key)
        }
    }
}
