import KeychainCore

/// The PostgreSQL shape of keychain items, the same as SQLite's (`Schema`): one typed column per
/// catalogue attribute named by its JSON name, the secret sealed with the same AAD binding, and
/// per stored class a partial UNIQUE index over its primary key, the access group included, with
/// absent values read as Apple's defaults (`coalesce`), so that NULLs collide as SQLite's
/// `ifnull` makes them (a plain unique index would treat them as distinct), and long values
/// indexed by digest (`indexed`).
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
        let expressions = Schema.primaryKeyIndexOrder(of: itemClass).map(indexed).joined(separator: ", ")
        return """
            CREATE UNIQUE INDEX \(Schema.primaryKeyIndexName(itemClass)) ON items (\(expressions)) \
            WHERE class = '\(itemClass.code)';
            """
    }

    /// Per class, the common lookup attributes and `synchronizable` followed by `seq`, so that a
    /// lookup returns its matches in creation order without a sort (SQLite's migration 2).
    static func createLookupIndex(_ itemClass: ItemClass) -> String {
        let columns = (Schema.leadingLookup(of: itemClass) + [.synchronizable]).map(indexed) + ["seq"]
        return "CREATE INDEX \(Schema.lookupIndexName(itemClass)) ON items (\(columns.joined(separator: ", "))) "
            + "WHERE class = '\(itemClass.code)';"
    }

    /// Migration 1: items, the keyring (wrapped data keys per term and the key check value) and
    /// clients, as SQLite's version 1 and 2 hold them.
    /// SHA-256 of a text's bytes. `textsend` is only STABLE in the catalogue, which an index
    /// expression refuses; its bytes are the text in the database's encoding, which never changes
    /// for a database, so the digest is IMMUTABLE in fact.
    static let createTextDigest = """
        CREATE FUNCTION text_digest(text) RETURNS bytea
            LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
            RETURN sha256(textsend($1));
        """

    static func version1() -> String {
        var script = createTextDigest + "\n" + createItemsTable() + "\n"
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

    /// Migration 2: what several nodes share besides items, keys and clients. `group_usage` as
    /// on SQLite (migration 3), filled from the items stored; `cluster_state`, one row of
    /// versioned state every node follows (`PGClusterState`): whether the vault is locked, and
    /// counters bumped by every change to the clients and the keyring.
    static func version2() -> String {
        """
        CREATE TABLE group_usage (
            access_group text PRIMARY KEY,
            items bigint NOT NULL,
            secret_bytes bigint NOT NULL
        );
        INSERT INTO group_usage (access_group, items, secret_bytes)
            SELECT coalesce("accessGroup", ''), count(*), sum(coalesce(octet_length(secret) - \(SealedBox.overhead), 0))
            FROM items GROUP BY 1;
        CREATE TABLE cluster_state (
            id integer PRIMARY KEY CHECK (id = 1),
            locked boolean NOT NULL DEFAULT false,
            clients_version bigint NOT NULL DEFAULT 0,
            keyring_version bigint NOT NULL DEFAULT 0
        );
        INSERT INTO cluster_state (id) VALUES (1);
        """
    }

    /// Migration 3: `group_usage` in shards, a row per group and connection shard
    /// (`pg_backend_pid() % PGGroupUsageTable.shards`), so that writes to one group from several
    /// connections and nodes do not queue on one row until each commits.
    static func version3() -> String {
        """
        ALTER TABLE group_usage DROP CONSTRAINT group_usage_pkey;
        ALTER TABLE group_usage ADD COLUMN shard integer NOT NULL DEFAULT 0;
        ALTER TABLE group_usage ADD PRIMARY KEY (access_group, shard);
        """
    }

    /// Migration 4: attribute bytes (`GroupQuota.attributeBytes`), counted for the items already
    /// stored into each group's shard 0. `AttributeValue.storedBytes` in SQL: a text's or bytea's
    /// bytes, 8 for a bigint.
    static func version4() -> String {
        let attributeBytes = Attribute.all.map { attribute in
            switch attribute.valueType {
            case .string, .enumeration, .data: "coalesce(octet_length(\(Schema.column(attribute))), 0)"
            case .integer, .bool, .date: "CASE WHEN \(Schema.column(attribute)) IS NULL THEN 0 ELSE 8 END"
            }
        }.joined(separator: " + ")
        return """
            ALTER TABLE group_usage ADD COLUMN attribute_bytes bigint NOT NULL DEFAULT 0;
            INSERT INTO group_usage (access_group, shard, items, secret_bytes, attribute_bytes)
                SELECT coalesce("accessGroup", ''), 0, 0, 0, sum(\(attributeBytes)) FROM items GROUP BY 1
                ON CONFLICT (access_group, shard) DO UPDATE SET attribute_bytes = excluded.attribute_bytes;
            """
    }
}
