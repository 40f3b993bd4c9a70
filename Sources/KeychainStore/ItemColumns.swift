package import KeychainCore

/// The items table as both backends' migrations made it: one column per catalogue attribute,
/// named by its JSON name; absent values read as Apple's defaults (the reference date for
/// dates); each class's primary-key index led by its common lookup, and the indexes' names.
/// Derived from `Attribute` at run time; the migrations' text never is.
package enum ItemColumns {
    /// The column name, quoted (JSON names are plain identifiers; `description` is a keyword).
    package static func column(_ attribute: Attribute) -> String { "\"\(attribute.name)\"" }

    /// The 2001-01-01 reference date in milliseconds since 1970.
    package static let referenceDateMilliseconds: Int64 = 978_307_200_000

    /// The attributes that lead each class's primary-key index: the common lookups (genp
    /// service+account, inet server+account, keys applicationTag, cert issuer+serialNumber), so
    /// the unique index also serves them and no second index slows down writes.
    package static func leadingLookup(of itemClass: ItemClass) -> [Attribute] {
        switch itemClass {
        case .genericPassword: [.service, .account]
        case .internetPassword: [.server, .account]
        case .certificate, .identity: [.issuer, .serialNumber]
        case .key: [.applicationTag]
        }
    }

    /// The names migration 1 gives each class's primary-key index and migration 2 its lookup index
    /// (on both backends).
    package static func primaryKeyIndexName(_ itemClass: ItemClass) -> String { "items_pk_\(itemClass.code)" }

    package static func lookupIndexName(_ itemClass: ItemClass) -> String { "items_lookup_\(itemClass.code)" }
}
