import KeychainCore
import KeychainStore

/// SQLite's spelling of what queries need of the items table (`ItemColumns`): the defaults absent
/// values read as, as SQL literals and as values.
enum Schema {
    /// The SQL literal of the primary-key default of an attribute's type.
    static func defaultLiteral(_ attribute: Attribute) -> String {
        switch attribute.valueType {
        case .string, .enumeration: "''"
        case .data: "x''"
        case .integer, .bool: "0"
        case .date: "\(ItemColumns.referenceDateMilliseconds)"
        }
    }

    /// The primary-key default of an attribute's type as a value (`defaultLiteral`'s).
    static func defaultValue(_ attribute: Attribute) -> SQLiteValue {
        switch attribute.valueType {
        case .string, .enumeration: .text("")
        case .data: .blob([])
        case .integer, .bool: .integer(0)
        case .date: .integer(ItemColumns.referenceDateMilliseconds)
        }
    }

    /// `ifnull("col", default)`: the value used for matching and uniqueness.
    static func effective(_ attribute: Attribute) -> String {
        "ifnull(\(ItemColumns.column(attribute)), \(defaultLiteral(attribute)))"
    }
}
