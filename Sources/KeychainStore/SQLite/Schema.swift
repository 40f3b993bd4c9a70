import KeychainCore

/// The SQL shape of keychain items: one typed column per catalogue attribute, named by its JSON
/// name, and per stored class a partial UNIQUE index over its primary key with absent values
/// read as Apple's defaults.
enum Schema {
    /// The column name, quoted (JSON names are plain identifiers; `description` is a keyword).
    static func column(_ attribute: Attribute) -> String { "\"\(attribute.name)\"" }

    static func sqlType(_ attribute: Attribute) -> String {
        switch attribute.valueType {
        case .string, .enumeration: "TEXT"
        case .data: "BLOB"
        case .integer, .bool, .date: "INTEGER"
        }
    }

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

    /// The primary key in index order: the lookup attributes first, then the rest in catalogue order.
    static func primaryKeyIndexOrder(of itemClass: ItemClass) -> [Attribute] {
        let lead = leadingLookup(of: itemClass)
        return lead + Attribute.primaryKey(of: itemClass).filter { !lead.contains($0) }
    }

    static func primaryKeyIndexName(_ itemClass: ItemClass) -> String { "items_pk_\(itemClass.code)" }

    static func lookupIndexName(_ itemClass: ItemClass) -> String { "items_lookup_\(itemClass.code)" }

    /// Migration 2: per class, the common lookup attributes and `synchronizable` followed by
    /// `seq`, so that a lookup (a token fetch: service + account) returns its matches already in
    /// creation order. With only the primary-key index SQLite built a temporary B-tree for
    /// `ORDER BY seq` on every query, which cost more than the lookup itself.
    static func lookupIndexes() -> String {
        ItemClass.storedClasses.map { itemClass in
            let columns = (leadingLookup(of: itemClass) + [.synchronizable]).map(effective) + ["seq"]
            return "CREATE INDEX \(lookupIndexName(itemClass)) ON items(\(columns.joined(separator: ", "))) "
                + "WHERE class = '\(itemClass.code)';"
        }.joined(separator: "\n")
    }

    static func createItemsTable() -> String {
        let columns = Attribute.all.map { "    \(column($0)) \(sqlType($0))" }.joined(separator: ",\n")
        return """
            CREATE TABLE items (
                seq INTEGER PRIMARY KEY,
                class TEXT NOT NULL,
                persistent_ref TEXT NOT NULL UNIQUE,
            \(columns),
                secret BLOB
            );
            """
    }

    static func createPrimaryKeyIndex(_ itemClass: ItemClass) -> String {
        let expressions = primaryKeyIndexOrder(of: itemClass).map(effective).joined(separator: ", ")
        return """
            CREATE UNIQUE INDEX \(primaryKeyIndexName(itemClass)) ON items(\(expressions)) \
            WHERE class = '\(itemClass.code)';
            """
    }

    /// Migration 1.
    static func version1() -> String {
        var script = createItemsTable() + "\n"
        for itemClass in ItemClass.storedClasses { script += createPrimaryKeyIndex(itemClass) + "\n" }
        script += """
            CREATE TABLE keyring (
                term INTEGER PRIMARY KEY,
                wrapped_key BLOB NOT NULL,
                created INTEGER NOT NULL,
                encryptions INTEGER NOT NULL DEFAULT 0
            ) STRICT;
            CREATE TABLE keyring_check (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                check_value BLOB NOT NULL
            ) STRICT;
            CREATE TABLE clients (
                name TEXT PRIMARY KEY,
                access_groups TEXT NOT NULL,
                role TEXT NOT NULL,
                created INTEGER NOT NULL,
                token_hash BLOB NOT NULL UNIQUE
            ) STRICT;
            """
        return script
    }
}
