import KeychainCore

/// The PostgreSQL shape of keychain items, the same as SQLite's (`Schema`): one typed column per
/// catalogue attribute named by its JSON name, the secret sealed with the same AAD binding, and
/// per stored class a partial UNIQUE index over its primary key, the access group included, with
/// absent values read as Apple's defaults (`coalesce`), so that NULLs collide as SQLite's
/// `ifnull` makes them (a plain unique index would treat them as distinct).
enum PGSchema {
    static func sqlType(_ attribute: Attribute) -> String {
        switch attribute.valueType {
        case .string, .enumeration: "text"
        case .data: "bytea"
        case .integer, .bool, .date: "bigint"
        }
    }

    /// The SQL literal of the primary-key default of an attribute's type.
    static func defaultLiteral(_ attribute: Attribute) -> String {
        switch attribute.valueType {
        case .string, .enumeration: "''"
        case .data: "'\\x'::bytea"
        case .integer, .bool: "0"
        case .date: "\(Schema.referenceDateMilliseconds)"
        }
    }

    /// `coalesce("col", default)`: the value used for matching and uniqueness.
    static func effective(_ attribute: Attribute) -> String {
        "coalesce(\(Schema.column(attribute)), \(defaultLiteral(attribute)))"
    }

    static func createItemsTable() -> String {
        let columns = Attribute.all.map { "    \(Schema.column($0)) \(sqlType($0))" }.joined(separator: ",\n")
        return """
            CREATE TABLE items (
                seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                class text NOT NULL,
                persistent_ref text NOT NULL UNIQUE,
            \(columns),
                secret bytea
            );
            """
    }

    static func createPrimaryKeyIndex(_ itemClass: ItemClass) -> String {
        let expressions = Schema.primaryKeyIndexOrder(of: itemClass).map(effective).joined(separator: ", ")
        return """
            CREATE UNIQUE INDEX \(Schema.primaryKeyIndexName(itemClass)) ON items (\(expressions)) \
            WHERE class = '\(itemClass.code)';
            """
    }

    /// Per class, the common lookup attributes and `synchronizable` followed by `seq`, so that a
    /// lookup returns its matches in creation order without a sort (SQLite's migration 2).
    static func createLookupIndex(_ itemClass: ItemClass) -> String {
        let columns = (Schema.leadingLookup(of: itemClass) + [.synchronizable]).map(effective) + ["seq"]
        return "CREATE INDEX \(Schema.lookupIndexName(itemClass)) ON items (\(columns.joined(separator: ", "))) "
            + "WHERE class = '\(itemClass.code)';"
    }

    /// Migration 1: items, the keyring (wrapped data keys per term and the key check value) and
    /// clients, as SQLite's version 1 and 2 hold them.
    static func version1() -> String {
        var script = createItemsTable() + "\n"
        for itemClass in ItemClass.storedClasses {
            script += createPrimaryKeyIndex(itemClass) + "\n" + createLookupIndex(itemClass) + "\n"
        }
        script += """
            CREATE TABLE keyring (
                term bigint PRIMARY KEY,
                wrapped_key bytea NOT NULL,
                created bigint NOT NULL,
                encryptions bigint NOT NULL DEFAULT 0
            );
            CREATE TABLE keyring_check (
                id integer PRIMARY KEY CHECK (id = 1),
                check_value bytea NOT NULL
            );
            CREATE TABLE clients (
                name text PRIMARY KEY,
                access_groups text NOT NULL,
                role text NOT NULL,
                created bigint NOT NULL,
                token_hash bytea NOT NULL UNIQUE
            );
            """
        return script
    }
}
