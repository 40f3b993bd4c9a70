import KeychainCore

/// What queries need to know of the items table the migrations made (`MigrationScripts.swift`):
/// one typed column per catalogue attribute, named by its JSON name, absent values read as
/// Apple's defaults, and the indexes' names. Derived from `Attribute` at run time; the migrations'
/// text never is.
enum Schema {
    /// The column name, quoted (JSON names are plain identifiers; `description` is a keyword).
    static func column(_ attribute: Attribute) -> String { "\"\(attribute.name)\"" }

    /// The 2001-01-01 reference date in milliseconds since 1970.
    static let referenceDateMilliseconds: Int64 = 978_307_200_000

    /// The SQL literal of the primary-key default of an attribute's type.
    static func defaultLiteral(_ attribute: Attribute) -> String {
        switch attribute.valueType {
        case .string, .enumeration: "''"
        case .data: "x''"
        case .integer, .bool: "0"
        case .date: "\(referenceDateMilliseconds)"
        }
    }

    /// The primary-key default of an attribute's type as a value (`defaultLiteral`'s).
    static func defaultValue(_ attribute: Attribute) -> SQLiteValue {
        switch attribute.valueType {
        case .string, .enumeration: .text("")
        case .data: .blob([])
        case .integer, .bool: .integer(0)
        case .date: .integer(referenceDateMilliseconds)
        }
    }

    /// `ifnull("col", default)`: the value used for matching and uniqueness.
    static func effective(_ attribute: Attribute) -> String {
        "ifnull(\(column(attribute)), \(defaultLiteral(attribute)))"
    }

    /// The attributes that lead each class's primary-key index: the common lookups (genp
    /// service+account, inet server+account, keys applicationTag, cert issuer+serialNumber), so
    /// the unique index also serves them and no second index slows down writes.
    static func leadingLookup(of itemClass: ItemClass) -> [Attribute] {
        switch itemClass {
        case .genericPassword: [.service, .account]
        case .internetPassword: [.server, .account]
        case .certificate, .identity: [.issuer, .serialNumber]
        case .key: [.applicationTag]
        }
    }

    /// The names migration 1 gives each class's primary-key index and migration 2 its lookup index
    /// (on both backends).
    static func primaryKeyIndexName(_ itemClass: ItemClass) -> String { "items_pk_\(itemClass.code)" }

    static func lookupIndexName(_ itemClass: ItemClass) -> String { "items_lookup_\(itemClass.code)" }
}
