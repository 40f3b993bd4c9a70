import KeychainStore

/// The text of every shipped PostgreSQL migration, frozen as SQLite's are (`Migrations`): a
/// database was made with exactly this SQL, so no text here depends on an application type and
/// none is ever edited; a schema change is a new migration (`ShippedMigrationsTests` pins each
/// text's digest).
extension PGMigrations {
    /// Migration 1: items, the keyring (wrapped data keys per term and the key check value) and
    /// clients, as SQLite's migrations 1 and 2 hold them, string and data attributes indexed by
    /// digest (`PGSchema.indexed`). `text_digest` is SHA-256 of a text's bytes: `textsend` is only
    /// STABLE in the catalogue, which an index expression refuses, but its bytes are the text in
    /// the database's encoding, which never changes for a database, so the digest is IMMUTABLE in fact.
    static let version1 = #"""
        CREATE FUNCTION text_digest(text) RETURNS bytea
            LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
            RETURN sha256(textsend($1));
        CREATE TABLE items (
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            class text NOT NULL,
            persistent_ref text NOT NULL UNIQUE,
            "accessible" text,
            "accessControl" bytea,
            "accessGroup" text,
            "synchronizable" bigint,
            "creationDate" bigint,
            "modificationDate" bigint,
            "label" text,
            "syncViewHint" text,
            "tokenID" text,
            "description" text,
            "comment" text,
            "creator" bigint,
            "type" bigint,
            "isInvisible" bigint,
            "isNegative" bigint,
            "account" text,
            "service" text,
            "generic" bytea,
            "securityDomain" text,
            "server" text,
            "protocol" text,
            "authenticationType" text,
            "port" bigint,
            "path" text,
            "certificateType" text,
            "certificateEncoding" text,
            "subject" bytea,
            "issuer" bytea,
            "serialNumber" bytea,
            "subjectKeyID" bytea,
            "publicKeyHash" bytea,
            "keyClass" text,
            "applicationLabel" bytea,
            "applicationTag" bytea,
            "keyType" text,
            "keySizeInBits" bigint,
            "effectiveKeySize" bigint,
            "isPermanent" bigint,
            "canEncrypt" bigint,
            "canDecrypt" bigint,
            "canDerive" bigint,
            "canSign" bigint,
            "canVerify" bigint,
            "canWrap" bigint,
            "canUnwrap" bigint,
            "isSensitive" bigint,
            "isExtractable" bigint,
            secret bytea
        );
        CREATE UNIQUE INDEX items_pk_genp ON items (text_digest(coalesce("service", '')), text_digest(coalesce("account", '')), text_digest(coalesce("accessGroup", '')), coalesce("synchronizable", 0), text_digest(coalesce("syncViewHint", '')), text_digest(coalesce("tokenID", ''))) WHERE class = 'genp';
        CREATE INDEX items_lookup_genp ON items (text_digest(coalesce("service", '')), text_digest(coalesce("account", '')), coalesce("synchronizable", 0), seq) WHERE class = 'genp';
        CREATE UNIQUE INDEX items_pk_inet ON items (text_digest(coalesce("server", '')), text_digest(coalesce("account", '')), text_digest(coalesce("accessGroup", '')), coalesce("synchronizable", 0), text_digest(coalesce("syncViewHint", '')), text_digest(coalesce("tokenID", '')), text_digest(coalesce("securityDomain", '')), text_digest(coalesce("protocol", '')), text_digest(coalesce("authenticationType", '')), coalesce("port", 0), text_digest(coalesce("path", ''))) WHERE class = 'inet';
        CREATE INDEX items_lookup_inet ON items (text_digest(coalesce("server", '')), text_digest(coalesce("account", '')), coalesce("synchronizable", 0), seq) WHERE class = 'inet';
        CREATE UNIQUE INDEX items_pk_cert ON items (sha256(coalesce("issuer", '\x'::bytea)), sha256(coalesce("serialNumber", '\x'::bytea)), text_digest(coalesce("accessGroup", '')), coalesce("synchronizable", 0), text_digest(coalesce("syncViewHint", '')), text_digest(coalesce("tokenID", '')), text_digest(coalesce("certificateType", ''))) WHERE class = 'cert';
        CREATE INDEX items_lookup_cert ON items (sha256(coalesce("issuer", '\x'::bytea)), sha256(coalesce("serialNumber", '\x'::bytea)), coalesce("synchronizable", 0), seq) WHERE class = 'cert';
        CREATE UNIQUE INDEX items_pk_keys ON items (sha256(coalesce("applicationTag", '\x'::bytea)), text_digest(coalesce("accessGroup", '')), coalesce("synchronizable", 0), text_digest(coalesce("syncViewHint", '')), text_digest(coalesce("tokenID", '')), text_digest(coalesce("keyClass", '')), sha256(coalesce("applicationLabel", '\x'::bytea)), text_digest(coalesce("keyType", '')), coalesce("keySizeInBits", 0), coalesce("effectiveKeySize", 0)) WHERE class = 'keys';
        CREATE INDEX items_lookup_keys ON items (sha256(coalesce("applicationTag", '\x'::bytea)), coalesce("synchronizable", 0), seq) WHERE class = 'keys';
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
        """#

    /// Migration 2: what several nodes share besides items, keys and clients. `group_usage` as
    /// on SQLite (migration 3), filled from the items stored; `cluster_state`, one row of
    /// versioned state every node follows (`PGClusterState`): whether the vault is locked, and
    /// counters bumped by every change to the clients and the keyring.
    static let version2 = #"""
        CREATE TABLE group_usage (
            access_group text PRIMARY KEY,
            items bigint NOT NULL,
            secret_bytes bigint NOT NULL
        );
        INSERT INTO group_usage (access_group, items, secret_bytes)
            SELECT coalesce("accessGroup", ''), count(*), sum(coalesce(octet_length(secret) - 33, 0))
            FROM items GROUP BY 1;
        CREATE TABLE cluster_state (
            id integer PRIMARY KEY CHECK (id = 1),
            locked boolean NOT NULL DEFAULT false,
            clients_version bigint NOT NULL DEFAULT 0,
            keyring_version bigint NOT NULL DEFAULT 0
        );
        INSERT INTO cluster_state (id) VALUES (1);
        """#

    /// Migration 3: `group_usage` in shards, a row per group and connection shard
    /// (`pg_backend_pid() % PGGroupUsageTable.shards`), so that writes to one group from several
    /// connections and nodes do not queue on one row until each commits.
    static let version3 = #"""
        ALTER TABLE group_usage DROP CONSTRAINT group_usage_pkey;
        ALTER TABLE group_usage ADD COLUMN shard integer NOT NULL DEFAULT 0;
        ALTER TABLE group_usage ADD PRIMARY KEY (access_group, shard);
        """#

    /// Migration 4: attribute bytes (`GroupQuota.attributeBytes`), counted for the items already
    /// stored into each group's shard 0, as `AttributeValue.storedBytes` counts them: a text's or
    /// bytea's bytes, 8 for a bigint.
    static let version4 = #"""
        ALTER TABLE group_usage ADD COLUMN attribute_bytes bigint NOT NULL DEFAULT 0;
        INSERT INTO group_usage (access_group, shard, items, secret_bytes, attribute_bytes)
            SELECT coalesce("accessGroup", ''), 0, 0, 0, sum(
                coalesce(octet_length("accessible"), 0) +
                coalesce(octet_length("accessControl"), 0) +
                coalesce(octet_length("accessGroup"), 0) +
                CASE WHEN "synchronizable" IS NULL THEN 0 ELSE 8 END +
                CASE WHEN "creationDate" IS NULL THEN 0 ELSE 8 END +
                CASE WHEN "modificationDate" IS NULL THEN 0 ELSE 8 END +
                coalesce(octet_length("label"), 0) +
                coalesce(octet_length("syncViewHint"), 0) +
                coalesce(octet_length("tokenID"), 0) +
                coalesce(octet_length("description"), 0) +
                coalesce(octet_length("comment"), 0) +
                CASE WHEN "creator" IS NULL THEN 0 ELSE 8 END +
                CASE WHEN "type" IS NULL THEN 0 ELSE 8 END +
                CASE WHEN "isInvisible" IS NULL THEN 0 ELSE 8 END +
                CASE WHEN "isNegative" IS NULL THEN 0 ELSE 8 END +
                coalesce(octet_length("account"), 0) +
                coalesce(octet_length("service"), 0) +
                coalesce(octet_length("generic"), 0) +
                coalesce(octet_length("securityDomain"), 0) +
                coalesce(octet_length("server"), 0) +
                coalesce(octet_length("protocol"), 0) +
                coalesce(octet_length("authenticationType"), 0) +
                CASE WHEN "port" IS NULL THEN 0 ELSE 8 END +
                coalesce(octet_length("path"), 0) +
                coalesce(octet_length("certificateType"), 0) +
                coalesce(octet_length("certificateEncoding"), 0) +
                coalesce(octet_length("subject"), 0) +
                coalesce(octet_length("issuer"), 0) +
                coalesce(octet_length("serialNumber"), 0) +
                coalesce(octet_length("subjectKeyID"), 0) +
                coalesce(octet_length("publicKeyHash"), 0) +
                coalesce(octet_length("keyClass"), 0) +
                coalesce(octet_length("applicationLabel"), 0) +
                coalesce(octet_length("applicationTag"), 0) +
                coalesce(octet_length("keyType"), 0) +
                CASE WHEN "keySizeInBits" IS NULL THEN 0 ELSE 8 END +
                CASE WHEN "effectiveKeySize" IS NULL THEN 0 ELSE 8 END +
                CASE WHEN "isPermanent" IS NULL THEN 0 ELSE 8 END +
                CASE WHEN "canEncrypt" IS NULL THEN 0 ELSE 8 END +
                CASE WHEN "canDecrypt" IS NULL THEN 0 ELSE 8 END +
                CASE WHEN "canDerive" IS NULL THEN 0 ELSE 8 END +
                CASE WHEN "canSign" IS NULL THEN 0 ELSE 8 END +
                CASE WHEN "canVerify" IS NULL THEN 0 ELSE 8 END +
                CASE WHEN "canWrap" IS NULL THEN 0 ELSE 8 END +
                CASE WHEN "canUnwrap" IS NULL THEN 0 ELSE 8 END +
                CASE WHEN "isSensitive" IS NULL THEN 0 ELSE 8 END +
                CASE WHEN "isExtractable" IS NULL THEN 0 ELSE 8 END
            ) FROM items GROUP BY 1
            ON CONFLICT (access_group, shard) DO UPDATE SET attribute_bytes = excluded.attribute_bytes;
        """#

    /// Migration 5: one row per node (`PGClusterNodes`): the release it runs, the schema version
    /// it knows, when it started and its last heartbeat, so that a feature can tell whether a
    /// node running an older release is still live.
    static let version5 = #"""
        CREATE TABLE cluster_nodes (
            node text PRIMARY KEY,
            release text NOT NULL,
            schema_version bigint NOT NULL,
            started_at timestamptz NOT NULL,
            heartbeat_at timestamptz NOT NULL
        );
        """#

    /// Migration 6: token lifetimes and workload login, as SQLite's migration 5: `tokens` (every
    /// token's hash and record; `PGTokenTable`), each client's token moved there with a fresh
    /// accessor and no expiry, the clients' token lifetime, and `login_roles`. For a rolling
    /// upgrade, `clients.token_hash` stays (nullable) as the client's current token, which older
    /// releases authenticate by: this release keeps it equal to the client's latest token, and a
    /// trigger carries a token an older release sets there into `tokens` (a client it removes
    /// takes its tokens along, by the foreign key). `login_roles.tokens` counts each role's stored
    /// tokens (kept by a trigger, as on SQLite). `cluster_state.tokens_version` counts
    /// revocations, announced one by one (`PGClusterState.announceRevocation`).
    static let version6 = #"""
        CREATE FUNCTION new_token_accessor() RETURNS text
            LANGUAGE sql VOLATILE
            RETURN 'kca_' || substr(encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'hex'), 1, 32);
        CREATE TABLE tokens (
            accessor text PRIMARY KEY,
            token_hash bytea NOT NULL UNIQUE,
            client text REFERENCES clients(name) ON DELETE CASCADE,
            login_role text,
            subject text,
            access_groups text,
            issued bigint NOT NULL,
            expires bigint,
            max_expires bigint,
            ttl bigint,
            CHECK ((client IS NULL) <> (login_role IS NULL))
        );
        CREATE INDEX tokens_by_client ON tokens(client) WHERE client IS NOT NULL;
        CREATE INDEX tokens_by_login_role ON tokens(login_role, expires) WHERE login_role IS NOT NULL;
        CREATE INDEX tokens_by_expiry ON tokens(expires) WHERE expires IS NOT NULL;
        INSERT INTO tokens (accessor, token_hash, client, issued)
            SELECT new_token_accessor(), token_hash, name, created FROM clients;
        ALTER TABLE clients ALTER COLUMN token_hash DROP NOT NULL;
        ALTER TABLE clients ADD COLUMN token_ttl bigint, ADD COLUMN token_max_ttl bigint;
        CREATE FUNCTION clients_token_from_older_release() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.token_hash IS NOT NULL AND NOT EXISTS (SELECT 1 FROM tokens WHERE token_hash = NEW.token_hash) THEN
                DELETE FROM tokens WHERE client = NEW.name;
                INSERT INTO tokens (accessor, token_hash, client, issued)
                    VALUES (new_token_accessor(), NEW.token_hash, NEW.name, (extract(epoch FROM now()) * 1000)::bigint);
            END IF;
            RETURN NULL;
        END
        $$;
        CREATE TRIGGER clients_token_from_older_release AFTER INSERT OR UPDATE OF token_hash ON clients
            FOR EACH ROW EXECUTE FUNCTION clients_token_from_older_release();
        CREATE TABLE login_roles (
            name text PRIMARY KEY,
            settings text NOT NULL,
            updated bigint NOT NULL,
            tokens bigint NOT NULL DEFAULT 0
        );
        CREATE FUNCTION login_tokens_counted() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'INSERT' THEN
                UPDATE login_roles SET tokens = tokens + 1 WHERE name = NEW.login_role;
            ELSE
                UPDATE login_roles SET tokens = tokens - 1 WHERE name = OLD.login_role;
            END IF;
            RETURN NULL;
        END
        $$;
        CREATE TRIGGER login_token_added AFTER INSERT ON tokens
            FOR EACH ROW WHEN (NEW.login_role IS NOT NULL) EXECUTE FUNCTION login_tokens_counted();
        CREATE TRIGGER login_token_removed AFTER DELETE ON tokens
            FOR EACH ROW WHEN (OLD.login_role IS NOT NULL) EXECUTE FUNCTION login_tokens_counted();
        ALTER TABLE cluster_state ADD COLUMN tokens_version bigint NOT NULL DEFAULT 0;
        """#

    /// Migration 7: KV version 2 history and the vault's identity, as SQLite's migration 6:
    /// `kv_secrets` and `kv_versions` (`PGKVTable`), their group and path in the "C" collation,
    /// so that the primary key orders paths by their bytes (a prefix listing reads it in order);
    /// a secret's versions go with it (foreign key, ON DELETE CASCADE, besides the store removing
    /// them to give their bytes back). `cluster_state.cluster_id` is the vault's cluster id, a
    /// random UUID made here once for every node sharing the database. `tokens.last_renewal` as
    /// on SQLite: nullable, so the trigger of migration 6 that carries an older release's token
    /// into `tokens` (naming its columns) inserts as before.
    static let version7 = #"""
        CREATE TABLE kv_secrets (
            access_group text COLLATE "C" NOT NULL,
            path text COLLATE "C" NOT NULL,
            max_versions bigint NOT NULL,
            cas_required boolean NOT NULL,
            delete_version_after bigint NOT NULL,
            custom_metadata bytea NOT NULL,
            custom_metadata_bytes bigint NOT NULL,
            current_version bigint NOT NULL,
            oldest_version bigint NOT NULL,
            created_time bigint NOT NULL,
            updated_time bigint NOT NULL,
            metadata_version bigint NOT NULL,
            PRIMARY KEY (access_group, path)
        );
        CREATE TABLE kv_versions (
            access_group text COLLATE "C" NOT NULL,
            path text COLLATE "C" NOT NULL,
            version bigint NOT NULL,
            created_time bigint NOT NULL,
            deletion_time bigint,
            destroyed boolean NOT NULL,
            data bytea,
            data_bytes bigint NOT NULL,
            PRIMARY KEY (access_group, path, version),
            FOREIGN KEY (access_group, path) REFERENCES kv_secrets ON DELETE CASCADE
        );
        ALTER TABLE cluster_state ADD COLUMN cluster_id text NOT NULL DEFAULT gen_random_uuid()::text;
        ALTER TABLE cluster_state ALTER COLUMN cluster_id DROP DEFAULT;
        ALTER TABLE tokens ADD COLUMN last_renewal bigint;
        """#

    /// Migration 8: OAuth providers (`PGProviderStore`), as SQLite's migration 7: `settings` a
    /// provider's JSON without its client secret, `client_secret` the secret sealed, bound to the
    /// table and the provider's name (NULL for a public client).
    static let version8 = #"""
        CREATE TABLE oauth_providers (
            name text COLLATE "C" PRIMARY KEY,
            settings text NOT NULL,
            client_secret bytea
        );
        """#

    /// Migration 9: connect sessions (`PGConnectSessionStore`), as SQLite's migration 8: the
    /// verifier sealed and bound to `connect_id`, `state` and the browser's cookie as SHA-256
    /// hashes (`state_hash` unique; a callback takes it with one `UPDATE … RETURNING`, which
    /// PostgreSQL's row lock makes single-use across nodes), dates in milliseconds.
    static let version9 = #"""
        CREATE TABLE connect_sessions (
            connect_id text COLLATE "C" PRIMARY KEY,
            provider text NOT NULL,
            access_group text NOT NULL,
            service text NOT NULL,
            "user" text,
            scopes text NOT NULL,
            redirect_uri text NOT NULL,
            return_to text,
            verifier bytea NOT NULL,
            state_hash bytea UNIQUE,
            browser_hash bytea,
            created bigint NOT NULL,
            expires bigint NOT NULL,
            outcome text NOT NULL,
            error text,
            refreshable boolean,
            granted_scope text
        );
        CREATE INDEX connect_sessions_expires ON connect_sessions (expires);
        """#

    /// Migration 10: `provider_holds` (`PGProviderHoldStore`), as SQLite's migration 9: the hold on a provider app after a
    /// `Retry-After`, shared by every node; `held_until` in milliseconds since 1970.
    static let version10 = #"""
        CREATE TABLE provider_holds (
            token_endpoint text COLLATE "C" NOT NULL,
            client_id text COLLATE "C" NOT NULL,
            held_until bigint NOT NULL,
            PRIMARY KEY (token_endpoint, client_id)
        );
        """#

    /// Migration 11: webhooks and their outbox, as SQLite's migration 10 (`PGWebhookTable`); a
    /// webhook's deliveries go with it (foreign key, ON DELETE CASCADE). Nodes claim due
    /// deliveries with `FOR UPDATE SKIP LOCKED` and a lease in `next_attempt`.
    static let version11 = #"""
        CREATE TABLE webhooks (
            name text COLLATE "C" PRIMARY KEY,
            url text NOT NULL,
            events text NOT NULL,
            secret bytea NOT NULL,
            created_time bigint NOT NULL,
            updated_time bigint NOT NULL
        );
        CREATE TABLE webhook_deliveries (
            id text PRIMARY KEY,
            webhook text COLLATE "C" NOT NULL REFERENCES webhooks(name) ON DELETE CASCADE,
            kind text NOT NULL,
            access_group text NOT NULL,
            service text NOT NULL,
            user_name text,
            connect_id text,
            refresh_state text,
            error text,
            at bigint NOT NULL,
            attempts bigint NOT NULL,
            next_attempt bigint NOT NULL
        );
        CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt);
        CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook);
        """#
}
