import KeychainStore

/// The text of every shipped SQLite migration, frozen: a database made by a release was made with
/// exactly this SQL, and a restore compares a backup's schema with a replay of it. So no text here
/// depends on an application type (`Attribute.all`, `SealedBox.overhead`, ...) and none is ever
/// edited: a schema change is a new migration (`ShippedMigrationsTests` pins each text's digest).
extension Migrations {
    /// Migration 1: items (one typed column per catalogue attribute, named by its JSON name) with a
    /// partial UNIQUE index per stored class over its primary key, absent values read as Apple's
    /// defaults (`ifnull`; dates as 2001-01-01 in milliseconds); the keyring; clients.
    static let version1 = #"""
        CREATE TABLE items (
            seq INTEGER PRIMARY KEY,
            class TEXT NOT NULL,
            persistent_ref TEXT NOT NULL UNIQUE,
            "accessible" TEXT,
            "accessControl" BLOB,
            "accessGroup" TEXT,
            "synchronizable" INTEGER,
            "creationDate" INTEGER,
            "modificationDate" INTEGER,
            "label" TEXT,
            "syncViewHint" TEXT,
            "tokenID" TEXT,
            "description" TEXT,
            "comment" TEXT,
            "creator" INTEGER,
            "type" INTEGER,
            "isInvisible" INTEGER,
            "isNegative" INTEGER,
            "account" TEXT,
            "service" TEXT,
            "generic" BLOB,
            "securityDomain" TEXT,
            "server" TEXT,
            "protocol" TEXT,
            "authenticationType" TEXT,
            "port" INTEGER,
            "path" TEXT,
            "certificateType" TEXT,
            "certificateEncoding" TEXT,
            "subject" BLOB,
            "issuer" BLOB,
            "serialNumber" BLOB,
            "subjectKeyID" BLOB,
            "publicKeyHash" BLOB,
            "keyClass" TEXT,
            "applicationLabel" BLOB,
            "applicationTag" BLOB,
            "keyType" TEXT,
            "keySizeInBits" INTEGER,
            "effectiveKeySize" INTEGER,
            "isPermanent" INTEGER,
            "canEncrypt" INTEGER,
            "canDecrypt" INTEGER,
            "canDerive" INTEGER,
            "canSign" INTEGER,
            "canVerify" INTEGER,
            "canWrap" INTEGER,
            "canUnwrap" INTEGER,
            "isSensitive" INTEGER,
            "isExtractable" INTEGER,
            secret BLOB
        );
        CREATE UNIQUE INDEX items_pk_genp ON items(ifnull("service", ''), ifnull("account", ''), ifnull("accessGroup", ''), ifnull("synchronizable", 0), ifnull("syncViewHint", ''), ifnull("tokenID", '')) WHERE class = 'genp';
        CREATE UNIQUE INDEX items_pk_inet ON items(ifnull("server", ''), ifnull("account", ''), ifnull("accessGroup", ''), ifnull("synchronizable", 0), ifnull("syncViewHint", ''), ifnull("tokenID", ''), ifnull("securityDomain", ''), ifnull("protocol", ''), ifnull("authenticationType", ''), ifnull("port", 0), ifnull("path", '')) WHERE class = 'inet';
        CREATE UNIQUE INDEX items_pk_cert ON items(ifnull("issuer", x''), ifnull("serialNumber", x''), ifnull("accessGroup", ''), ifnull("synchronizable", 0), ifnull("syncViewHint", ''), ifnull("tokenID", ''), ifnull("certificateType", '')) WHERE class = 'cert';
        CREATE UNIQUE INDEX items_pk_keys ON items(ifnull("applicationTag", x''), ifnull("accessGroup", ''), ifnull("synchronizable", 0), ifnull("syncViewHint", ''), ifnull("tokenID", ''), ifnull("keyClass", ''), ifnull("applicationLabel", x''), ifnull("keyType", ''), ifnull("keySizeInBits", 0), ifnull("effectiveKeySize", 0)) WHERE class = 'keys';
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
        """#

    /// Migration 2: per class, the common lookup attributes and `synchronizable` followed by
    /// `seq`, so that a lookup (a token fetch: service + account) returns its matches already in
    /// creation order. With only the primary-key index SQLite built a temporary B-tree for
    /// `ORDER BY seq` on every query, which cost more than the lookup itself.
    static let version2 = #"""
        CREATE INDEX items_lookup_genp ON items(ifnull("service", ''), ifnull("account", ''), ifnull("synchronizable", 0), seq) WHERE class = 'genp';
        CREATE INDEX items_lookup_inet ON items(ifnull("server", ''), ifnull("account", ''), ifnull("synchronizable", 0), seq) WHERE class = 'inet';
        CREATE INDEX items_lookup_cert ON items(ifnull("issuer", x''), ifnull("serialNumber", x''), ifnull("synchronizable", 0), seq) WHERE class = 'cert';
        CREATE INDEX items_lookup_keys ON items(ifnull("applicationTag", x''), ifnull("synchronizable", 0), seq) WHERE class = 'keys';
        """#

    /// Migration 3: `group_usage` (`GroupUsageTable`), filled from the items stored; a sealed
    /// secret is its plaintext and 33 bytes (`SealedBox.overhead` when this shipped).
    static let version3 = #"""
        CREATE TABLE group_usage (
            access_group TEXT PRIMARY KEY,
            items INTEGER NOT NULL,
            secret_bytes INTEGER NOT NULL
        ) STRICT;
        INSERT INTO group_usage (access_group, items, secret_bytes)
            SELECT ifnull("accessGroup", ''), count(*), sum(ifnull(length(secret) - 33, 0))
            FROM items GROUP BY 1;
        """#

    /// Migration 4: attribute bytes (`GroupQuota.attributeBytes`), counted for the items already
    /// stored as `AttributeValue.storedBytes` counts them: a text's UTF-8 bytes, a blob's bytes, 8
    /// for an integer (a column holds only its attribute's type). `WHERE true` lets SQLite parse
    /// the upsert after a SELECT.
    static let version4 = #"""
        ALTER TABLE group_usage ADD COLUMN attribute_bytes INTEGER NOT NULL DEFAULT 0;
        INSERT INTO group_usage (access_group, items, secret_bytes, attribute_bytes)
            SELECT ifnull("accessGroup", ''), 0, 0, sum(
                ifnull(length(CAST("accessible" AS BLOB)), 0) +
                ifnull(length("accessControl"), 0) +
                ifnull(length(CAST("accessGroup" AS BLOB)), 0) +
                ("synchronizable" IS NOT NULL) * 8 +
                ("creationDate" IS NOT NULL) * 8 +
                ("modificationDate" IS NOT NULL) * 8 +
                ifnull(length(CAST("label" AS BLOB)), 0) +
                ifnull(length(CAST("syncViewHint" AS BLOB)), 0) +
                ifnull(length(CAST("tokenID" AS BLOB)), 0) +
                ifnull(length(CAST("description" AS BLOB)), 0) +
                ifnull(length(CAST("comment" AS BLOB)), 0) +
                ("creator" IS NOT NULL) * 8 +
                ("type" IS NOT NULL) * 8 +
                ("isInvisible" IS NOT NULL) * 8 +
                ("isNegative" IS NOT NULL) * 8 +
                ifnull(length(CAST("account" AS BLOB)), 0) +
                ifnull(length(CAST("service" AS BLOB)), 0) +
                ifnull(length("generic"), 0) +
                ifnull(length(CAST("securityDomain" AS BLOB)), 0) +
                ifnull(length(CAST("server" AS BLOB)), 0) +
                ifnull(length(CAST("protocol" AS BLOB)), 0) +
                ifnull(length(CAST("authenticationType" AS BLOB)), 0) +
                ("port" IS NOT NULL) * 8 +
                ifnull(length(CAST("path" AS BLOB)), 0) +
                ifnull(length(CAST("certificateType" AS BLOB)), 0) +
                ifnull(length(CAST("certificateEncoding" AS BLOB)), 0) +
                ifnull(length("subject"), 0) +
                ifnull(length("issuer"), 0) +
                ifnull(length("serialNumber"), 0) +
                ifnull(length("subjectKeyID"), 0) +
                ifnull(length("publicKeyHash"), 0) +
                ifnull(length(CAST("keyClass" AS BLOB)), 0) +
                ifnull(length("applicationLabel"), 0) +
                ifnull(length("applicationTag"), 0) +
                ifnull(length(CAST("keyType" AS BLOB)), 0) +
                ("keySizeInBits" IS NOT NULL) * 8 +
                ("effectiveKeySize" IS NOT NULL) * 8 +
                ("isPermanent" IS NOT NULL) * 8 +
                ("canEncrypt" IS NOT NULL) * 8 +
                ("canDecrypt" IS NOT NULL) * 8 +
                ("canDerive" IS NOT NULL) * 8 +
                ("canSign" IS NOT NULL) * 8 +
                ("canVerify" IS NOT NULL) * 8 +
                ("canWrap" IS NOT NULL) * 8 +
                ("canUnwrap" IS NOT NULL) * 8 +
                ("isSensitive" IS NOT NULL) * 8 +
                ("isExtractable" IS NOT NULL) * 8
            ) FROM items WHERE true GROUP BY 1
            ON CONFLICT (access_group) DO UPDATE SET attribute_bytes = excluded.attribute_bytes;
        """#

    /// Migration 5: token lifetimes and workload login. `tokens` holds every token's hash and
    /// record (`TokenTable`): a client's (`client`) or a login role's (`login_role`, with the
    /// groups it granted). Each client's token moves there with a fresh accessor and no expiry, as
    /// issued when the client was made; `clients` loses `token_hash` (a UNIQUE column SQLite
    /// cannot drop, so the table is made again) and gains its tokens' lifetime. `login_roles`
    /// holds the JWT login roles (`SQLiteLoginRoleStore`), each as its JSON, and how many tokens
    /// each has stored (kept by two triggers, so that a login checks its role's bound without
    /// counting rows; `TokenTable.loginTokenCount`).
    static let version5 = #"""
        CREATE TABLE tokens (
            accessor TEXT PRIMARY KEY,
            token_hash BLOB NOT NULL UNIQUE,
            client TEXT,
            login_role TEXT,
            subject TEXT,
            access_groups TEXT,
            issued INTEGER NOT NULL,
            expires INTEGER,
            max_expires INTEGER,
            ttl INTEGER,
            CHECK ((client IS NULL) <> (login_role IS NULL))
        ) STRICT;
        CREATE INDEX tokens_by_client ON tokens(client) WHERE client IS NOT NULL;
        CREATE INDEX tokens_by_login_role ON tokens(login_role, expires) WHERE login_role IS NOT NULL;
        CREATE INDEX tokens_by_expiry ON tokens(expires) WHERE expires IS NOT NULL;
        INSERT INTO tokens (accessor, token_hash, client, issued)
            SELECT 'kca_' || lower(hex(randomblob(16))), token_hash, name, created FROM clients;
        CREATE TABLE clients_v5 (
            name TEXT PRIMARY KEY,
            access_groups TEXT NOT NULL,
            role TEXT NOT NULL,
            created INTEGER NOT NULL,
            token_ttl INTEGER,
            token_max_ttl INTEGER
        ) STRICT;
        INSERT INTO clients_v5 (name, access_groups, role, created) SELECT name, access_groups, role, created FROM clients;
        DROP TABLE clients;
        ALTER TABLE clients_v5 RENAME TO clients;
        CREATE TABLE login_roles (
            name TEXT PRIMARY KEY,
            settings TEXT NOT NULL,
            updated INTEGER NOT NULL,
            tokens INTEGER NOT NULL DEFAULT 0
        ) STRICT;
        CREATE TRIGGER login_token_added AFTER INSERT ON tokens WHEN new.login_role IS NOT NULL BEGIN
            UPDATE login_roles SET tokens = tokens + 1 WHERE name = new.login_role;
        END;
        CREATE TRIGGER login_token_removed AFTER DELETE ON tokens WHEN old.login_role IS NOT NULL BEGIN
            UPDATE login_roles SET tokens = tokens - 1 WHERE name = old.login_role;
        END;
        """#

    /// Migration 6: KV version 2 history (`KVTable`) and the vault's identity. `kv_secrets` holds
    /// a secret's metadata, its custom metadata sealed (`custom_metadata`, bound to the table,
    /// group and path) and that metadata's bytes (`custom_metadata_bytes`, counted in the group's
    /// attribute bytes); `kv_versions` one row per kept version, its data sealed (NULL once
    /// destroyed; bound to the table, group, path and number) and the data's bytes (`data_bytes`,
    /// counted in the group's secret bytes), so that a removal gives usage back without unsealing.
    /// A secret's versions are removed with it by the store (no foreign keys on SQLite). Dates are
    /// milliseconds since 1970, as the items' and tokens'. `vault_identity` holds the vault's
    /// cluster id, a random UUID (version 4, lowercase) made here, for a new database or an old one.
    /// `tokens.last_renewal` is when a token was last renewed (NULL until then; Vault's lookup
    /// answers it).
    static let version6 = #"""
        CREATE TABLE kv_secrets (
            access_group TEXT NOT NULL,
            path TEXT NOT NULL,
            max_versions INTEGER NOT NULL,
            cas_required INTEGER NOT NULL,
            delete_version_after INTEGER NOT NULL,
            custom_metadata BLOB NOT NULL,
            custom_metadata_bytes INTEGER NOT NULL,
            current_version INTEGER NOT NULL,
            oldest_version INTEGER NOT NULL,
            created_time INTEGER NOT NULL,
            updated_time INTEGER NOT NULL,
            metadata_version INTEGER NOT NULL,
            PRIMARY KEY (access_group, path)
        ) STRICT, WITHOUT ROWID;
        CREATE TABLE kv_versions (
            access_group TEXT NOT NULL,
            path TEXT NOT NULL,
            version INTEGER NOT NULL,
            created_time INTEGER NOT NULL,
            deletion_time INTEGER,
            destroyed INTEGER NOT NULL,
            data BLOB,
            data_bytes INTEGER NOT NULL,
            PRIMARY KEY (access_group, path, version)
        ) STRICT, WITHOUT ROWID;
        CREATE TABLE vault_identity (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            cluster_id TEXT NOT NULL
        ) STRICT;
        INSERT INTO vault_identity (id, cluster_id)
            SELECT 1, substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-4' || substr(h, 14, 3) || '-'
                || substr('89ab', 1 + (random() & 3), 1) || substr(h, 18, 3) || '-' || substr(h, 21, 12)
            FROM (SELECT lower(hex(randomblob(16))) AS h);
        ALTER TABLE tokens ADD COLUMN last_renewal INTEGER;
        """#

    /// Migration 7: OAuth providers (`SQLiteProviderStore`). `settings` holds a provider's JSON
    /// without its client secret; `client_secret` the secret sealed, bound to the table and the
    /// provider's name (NULL for a public client).
    static let version7 = #"""
        CREATE TABLE oauth_providers (
            name TEXT PRIMARY KEY,
            settings TEXT NOT NULL,
            client_secret BLOB
        ) STRICT, WITHOUT ROWID;
        """#

    /// Migration 8: connect sessions (`SQLiteConnectSessionStore`). One row per session: the
    /// PKCE verifier sealed (`verifier`, bound to the table and `connect_id`), the browser's
    /// `state` and binding cookie only as SHA-256 hashes (`state_hash` NULL before the browser's
    /// first hop and once a callback took it; unique, so a callback finds its session by it),
    /// scopes space-separated, dates in milliseconds. `outcome` is `pending`, `connected` or
    /// `failed`, with `error`, `refreshable` and `granted_scope`. Expired rows are purged.
    static let version8 = #"""
        CREATE TABLE connect_sessions (
            connect_id TEXT PRIMARY KEY,
            provider TEXT NOT NULL,
            access_group TEXT NOT NULL,
            service TEXT NOT NULL,
            user TEXT,
            scopes TEXT NOT NULL,
            redirect_uri TEXT NOT NULL,
            return_to TEXT,
            verifier BLOB NOT NULL,
            state_hash BLOB UNIQUE,
            browser_hash BLOB,
            created INTEGER NOT NULL,
            expires INTEGER NOT NULL,
            outcome TEXT NOT NULL,
            error TEXT,
            refreshable INTEGER,
            granted_scope TEXT
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX connect_sessions_expires ON connect_sessions (expires);
        """#

    /// Migration 9: holds on provider apps (`SQLiteProviderHoldStore`): no call to a token
    /// endpoint for a client id before `held_until` (milliseconds since 1970), after a `Retry-After`.
    /// Neither column is a secret; a row whose hold has ended is removed by the next hold.
    static let version9 = #"""
        CREATE TABLE provider_holds (
            token_endpoint TEXT NOT NULL,
            client_id TEXT NOT NULL,
            held_until INTEGER NOT NULL,
            PRIMARY KEY (token_endpoint, client_id)
        ) STRICT, WITHOUT ROWID;
        """#

    /// Migration 10: webhooks (`WebhookTable`) and their outbox. `webhooks` holds one row per
    /// webhook: its URL, the event kinds it subscribes to (comma-separated) and its signing key
    /// sealed (bound to the table and name). `webhook_deliveries` holds each event still to be
    /// delivered to each subscribed webhook, written in the transaction that records the change
    /// it tells of: its `webhook-id`, the event's fields (never a secret), the attempts so far and
    /// when the next is due (milliseconds since 1970, as everywhere). A webhook's deliveries are
    /// removed with it by the store (no foreign keys on SQLite).
    static let version10 = #"""
        CREATE TABLE webhooks (
            name TEXT PRIMARY KEY,
            url TEXT NOT NULL,
            events TEXT NOT NULL,
            secret BLOB NOT NULL,
            created_time INTEGER NOT NULL,
            updated_time INTEGER NOT NULL
        ) STRICT, WITHOUT ROWID;
        CREATE TABLE webhook_deliveries (
            id TEXT PRIMARY KEY,
            webhook TEXT NOT NULL,
            kind TEXT NOT NULL,
            access_group TEXT NOT NULL,
            service TEXT NOT NULL,
            user_name TEXT,
            connect_id TEXT,
            refresh_state TEXT,
            error TEXT,
            at INTEGER NOT NULL,
            attempts INTEGER NOT NULL,
            next_attempt INTEGER NOT NULL
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt);
        CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook);
        """#

    /// Migration 11: a KV secret's newest version kept in its `kv_secrets` row (`head_*`, NULL
    /// while there is none there), so that writing a new secret adds one KV row, not two; the
    /// older versions stay in `kv_versions`, a version in one place only. A head version's data is
    /// sealed and bound as in `kv_versions` (table, group, path and number), so it moves between
    /// the two unchanged. Secrets written before keep every version in `kv_versions`; their next
    /// version is their first head (docs/decisions.md, "A KV secret's newest version in its row").
    static let version11 = #"""
        ALTER TABLE kv_secrets ADD COLUMN head_version INTEGER;
        ALTER TABLE kv_secrets ADD COLUMN head_created_time INTEGER;
        ALTER TABLE kv_secrets ADD COLUMN head_deletion_time INTEGER;
        ALTER TABLE kv_secrets ADD COLUMN head_destroyed INTEGER;
        ALTER TABLE kv_secrets ADD COLUMN head_data BLOB;
        ALTER TABLE kv_secrets ADD COLUMN head_data_bytes INTEGER;
        """#
}
