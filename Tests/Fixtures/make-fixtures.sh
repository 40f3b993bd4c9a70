#!/usr/bin/env bash
# Makes the upgrade fixtures (Tests/Fixtures/README.md) with an OLD keychaind release: a data
# directory, a sealed backup and a PostgreSQL dump, each filled with the same items, tokens,
# refresh setting, client and two key terms. Not part of the test run: run it by hand, once per
# release whose vaults later builds must open, and commit what it writes.
#
#   git worktree add /work/kc-fixture b711b08
#   (cd /work/kc-fixture && swift build -c release --product keychaind --scratch-path .build-release)
#   Tests/Fixtures/make-fixtures.sh /work/kc-fixture/.build-release/release/keychaind [Tests/Fixtures/b711b08]
#
# Needs curl, openssl, python3 and Debian's postgresql (initdb, pg_ctl and postgres refuse root:
# they run as `postgres` through runuser). The secrets stored are the ones
# Tests/IntegrationTests/UpgradeFixtureTests.swift expects: change both together.
set -euo pipefail

old_binary=$(realpath "${1:?usage: make-fixtures.sh OLD_KEYCHAIND [OUTPUT_DIR]}")
output=${2:-"$(dirname "${BASH_SOURCE[0]}")/b711b08"}
scratch=$(mktemp -d /tmp/kc-fixtures.XXXXXX)
# The cluster's own directory: the postgres user must reach it, and nothing else is kept there.
pg_dir=$(mktemp -d /tmp/kc-fixtures-pg.XXXXXX)
server_pid=""
pg_bin=$(pg_config --bindir)
as_postgres=()
if [ "$(id -u)" = 0 ]; then as_postgres=(runuser -u postgres --); fi

cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
    if [ -f "$pg_dir/data/postmaster.pid" ]; then
        "${as_postgres[@]}" "$pg_bin/pg_ctl" -D "$pg_dir/data" -m fast -w stop >/dev/null || true
    fi
    rm -rf "$scratch" "$pg_dir"
}
trap cleanup EXIT

# Starts the old release over data directory $1 (environment as given); sets base and token.
start_server() {
    "$old_binary" serve --listen 127.0.0.1:0 --data-dir "$1" >"$1.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 100); do
        port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$1.log")
        if [ -n "$port" ]; then break; fi
        sleep 0.1
    done
    if [ -z "$port" ]; then cat "$1.log" >&2; exit 1; fi
    base=http://127.0.0.1:$port
    token=$(cat "$1/admin.token")
}

# SIGTERM and wait: a clean stop checkpoints SQLite's WAL into keychain.db.
stop_server() {
    kill "$server_pid"
    wait "$server_pid" || true
    server_pid=""
}

# call METHOD PATH [JSON] [TOKEN]: the answer's body; fails unless it is 2xx.
call() {
    curl -sS --fail-with-body -X "$1" "$base$2" -H "Authorization: Bearer ${4:-$token}" \
        -H 'Content-Type: application/json' ${3:+-d "$3"}
}

b64() { base64 -w0 "$1"; }

# Certificates and keys: a certificate item, a key item and an identity (certificate and the
# private key whose public key it holds), each from openssl, kept beside the fixtures.
make_pki() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 36500 \
        -subj "/CN=keychaind fixture certificate" -keyout "$scratch/cert.pem.key" -out "$scratch/cert.pem" 2>/dev/null
    openssl x509 -in "$scratch/cert.pem" -outform DER -out "$output/certificate.der"
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -outform DER -out "$output/key.der"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 36500 \
        -subj "/CN=keychaind fixture identity" -keyout "$scratch/identity.pem.key" -out "$scratch/identity.pem" 2>/dev/null
    openssl x509 -in "$scratch/identity.pem" -outform DER -out "$output/identity-certificate.der"
    openssl pkey -in "$scratch/identity.pem.key" -outform DER -out "$output/identity-key.der"
}

# What every fixture holds; writes the client's token to $1. Term 1 seals what comes before the
# rotation, term 2 what comes after.
fill() {
    call POST /v1/items/genericPassword "{\"service\":\"fixture.example.com\",\"account\":\"alice\",\"value\":\"generic-secret-term-1\",\"label\":\"fixture generic\",\"comment\":\"made by b711b08\",\"generic\":\"$(printf generic-attribute | base64)\"}" >/dev/null
    call POST /v1/items/internetPassword '{"server":"fixture.example.com","account":"bob","protocol":"https","port":8443,"path":"/login","value":"internet-secret-term-1"}' >/dev/null
    call POST /v1/items/certificate "{\"data\":\"$(b64 "$output/certificate.der")\",\"label\":\"fixture certificate\"}" >/dev/null
    call PUT /v1/tokens/fixture-api '{"accessToken":"access-fixture-api","refreshToken":"refresh-fixture-api","expiresAt":"2035-01-01T00:00:00Z"}' >/dev/null
    client_token=$(call POST /v1/admin/clients '{"name":"fixture-app","accessGroups":["app"]}' |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])')
    printf '%s\n' "$client_token" >"$1"
    call POST /v1/items/genericPassword '{"service":"fixture.app","account":"app-user","value":"client-secret-term-1"}' "$client_token" >/dev/null

    call POST /v1/admin/rotate >/dev/null

    call POST /v1/items/key "{\"data\":\"$(b64 "$output/key.der")\",\"label\":\"fixture key\",\"keyClass\":\"private\",\"keyType\":\"ec\",\"applicationTag\":\"$(printf fixture.key | base64)\"}" >/dev/null
    call POST /v1/items/identity "{\"certificate\":\"$(b64 "$output/identity-certificate.der")\",\"privateKey\":\"$(b64 "$output/identity-key.der")\",\"label\":\"fixture identity\"}" >/dev/null
    call PUT '/v1/tokens/fixture-api?user=carol' '{"accessToken":"access-carol","refreshToken":"refresh-carol"}' >/dev/null
    # A token valid until 2035 first, so that the setting has nothing to refresh (and never calls
    # its endpoint, which nothing serves).
    call PUT /v1/tokens/fixture-refresh '{"accessToken":"access-fixture-refresh","expiresAt":"2035-01-01T00:00:00Z"}' >/dev/null
    call PUT /v1/tokens/fixture-refresh/refresh '{"tokenEndpoint":"http://127.0.0.1:9/token","grant":"client_credentials","clientId":"fixture-client","clientSecret":"fixture-client-secret","scope":"read","refreshBefore":60}' >/dev/null
    call POST /v1/items/genericPassword '{"service":"fixture.example.com","account":"dave","value":"generic-secret-term-2"}' >/dev/null
    call GET /v1/admin/vault | grep -q '"terms":2'
}

# A fixture is what a release wrote, never edited: make a new one beside it instead.
if [ -e "$output" ]; then echo "$output exists: remove it first to make it again" >&2; exit 1; fi
mkdir -p "$output"
make_pki

# SQLite: the data directory after a clean stop, and a sealed backup of it.
start_server "$scratch/sqlite"
fill "$output/sqlite-client.token"
call GET /v1/admin/backup >"$output/sqlite-backup.kcbackup"
stop_server
if [ -s "$scratch/sqlite/keychain.db-wal" ]; then echo "keychain.db-wal not empty after the stop" >&2; exit 1; fi
mkdir "$output/sqlite-data"
cp "$scratch/sqlite/"{master.key,keychain.db,admin.token} "$output/sqlite-data/"

# PostgreSQL: a throwaway cluster, a database the old release initialised and filled, dumped.
if [ "$(id -u)" = 0 ]; then chown postgres: "$pg_dir"; fi
pg_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${as_postgres[@]}" "$pg_bin/initdb" -D "$pg_dir/data" -U keychaind -A trust -E UTF8 --no-locale --no-sync >/dev/null
"${as_postgres[@]}" "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $pg_port -c unix_socket_directories=$pg_dir" start >/dev/null
"$pg_bin/createdb" -h 127.0.0.1 -p "$pg_port" -U keychaind fixture
export KEYCHAIND_STORAGE_BACKEND=postgresql
export KEYCHAIND_STORAGE_POSTGRESQL_URL="host=127.0.0.1 port=$pg_port user=keychaind dbname=fixture"
start_server "$scratch/postgresql"
fill "$output/postgresql-client.token"
stop_server
"$pg_bin/pg_dump" -h 127.0.0.1 -p "$pg_port" -U keychaind --no-owner --no-privileges fixture >"$output/postgresql.sql"
mkdir "$output/postgresql-data"
cp "$scratch/postgresql/"{master.key,admin.token} "$output/postgresql-data/"

du -sh "$output"
