/// A database migrated by a later keychaind release: its schema version is past every migration
/// this build has. Migrations throw it before writing anything, so the later release (or the copy
/// taken before that release migrated) still has the database as it was; `DataDirectory` turns it
/// into the operator's message (`DataDirectoryError.Code.newerSchema`).
package struct NewerSchemaError: Error, CustomStringConvertible {
    /// The database's schema version.
    package let found: Int64
    /// The last version this build's migrations make.
    package let known: Int64

    package init(found: Int64, known: Int64) {
        self.found = found
        self.known = known
    }

    package var description: String { "database schema version \(found) is newer than this keychaind (\(known))" }
}
