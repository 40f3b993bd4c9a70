import KeychainCore
import KeychainStore

/// What queries need to know of the PostgreSQL items table the migrations made
/// (`PGMigrationScripts.swift`), the same as SQLite's (`Schema`): one typed column per catalogue
/// attribute named by its JSON name, and per stored class a partial UNIQUE index over its primary
/// key, the access group included, with absent values read as Apple's defaults (`coalesce`), so
/// that NULLs collide as SQLite's `ifnull` makes them (a plain unique index would treat them as
/// distinct), and long values indexed by digest (`indexed`), which a find must spell as the index
/// does to use it.
enum PGSchema {
    /// The SQL literal of the primary-key default of an attribute's type.
    static func defaultLiteral(_ attribute: Attribute) -> String {
        switch attribute.valueType {
        case .string, .enumeration: "''"
        case .data: "'\\x'::bytea"
        case .integer, .bool: "0"
        case .date: "\(ItemColumns.referenceDateMilliseconds)"
        }
    }

    /// `coalesce("col", default)`: the value used for matching and uniqueness.
    static func effective(_ attribute: Attribute) -> String {
        "coalesce(\(ItemColumns.column(attribute)), \(defaultLiteral(attribute)))"
    }

    /// What the indexes hold of an attribute: its effective value for integers, and a SHA-256
    /// digest of it for strings and data, since a B-tree entry is limited to about 2.7 kB and an
    /// attribute is not (SQLite stores any size; PostgreSQL refused a 3.2 kB one with 54000). Equal
    /// digests mean equal values, so uniqueness is unchanged. Text goes through `text_digest`.
    static func indexed(_ attribute: Attribute) -> String {
        switch attribute.valueType {
        case .string, .enumeration: "text_digest(\(effective(attribute)))"
        case .data: "sha256(\(effective(attribute)))"
        case .integer, .bool, .date: effective(attribute)
        }
    }

    /// `indexed` of a parameter (`$n`) of `attribute`'s type, for a find to name the index.
    static func indexed(_ attribute: Attribute, parameter: String) -> String {
        switch attribute.valueType {
        case .string, .enumeration: "text_digest(\(parameter)::text)"
        case .data: "sha256(\(parameter)::bytea)"
        case .integer, .bool, .date: parameter
        }
    }
}
