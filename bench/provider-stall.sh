#!/usr/bin/env bash
# A provider that hangs, and everyone else: one service's token endpoint never answers (a real
# OAuth 2.0 server, Tests/IntegrationTests/Support/oauth_server.py, told to sleep an hour) while
# HUNG (32) connections keep fetching that service's token; meanwhile wrk measures another
# tenant's token fetch (its own client and group, no refresh setting). Prints, for each build
# given, the other tenant's fetch rate and latency (p50/p99/max) alone and with the provider
# hung, and what the hung service's callers got. Default refresh settings (timeoutSeconds 10,
# waitSeconds 15) and the default worker threads (two per core).
#
# usage: bench/provider-stall.sh [BINARY...]   (default: this tree's release build)
#   e.g. bench/provider-stall.sh /tmp/old/keychaind .build/release/keychaind   (side by side)
# env: SECONDS_PER_RUN (20), HUNG (32)
# needs: wrk, curl, /usr/bin/python3 with authlib and flask (scripts/bootstrap --test --bench).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
duration=${SECONDS_PER_RUN:-20}
hung=${HUNG:-32}
bench_workspace

binaries=("$@")
if [ ${#binaries[@]} -eq 0 ]; then
    bench_build_keychaind
    binaries=("$KEYCHAIND")
fi

/usr/bin/python3 Tests/IntegrationTests/Support/oauth_server.py >"$work/oauth.out" 2>/dev/null &
pids+=($!)
for _ in $(seq 1 600); do grep -q listening "$work/oauth.out" 2>/dev/null && break; sleep 0.1; done
provider="http://127.0.0.1:$(awk '{ print $2 }' "$work/oauth.out")"
curl -sf -X POST "$provider/control" -H 'Content-Type: application/json' -d '{"mode":"slow","delay":3600}' >/dev/null

# p50, p99 and max in ms and requests/s of a wrk --latency report.
summary() {
    local p50 p99 max rate
    p50=$(awk '$1 == "50%" { print $2 }' "$1")
    p99=$(awk '$1 == "99%" { print $2 }' "$1")
    max=$(awk '$1 == "Latency" { print $4 }' "$1")
    rate=$(awk '/^Requests\/sec/ { printf "%.0f", $2 }' "$1")
    echo "$rate req/s, p50 $(to_ms "$p50") ms, p99 $(to_ms "$p99") ms, max $(to_ms "$max") ms"
}

for binary in "${binaries[@]}"; do
    name="kc$RANDOM"
    KEYCHAIND="$binary" bench_serve_one "$name"
    kc="http://127.0.0.1:$port"
    admin=$(cat "$work/$name/admin.token")
    auth=(-H "Authorization: Bearer $admin" -H "Content-Type: application/json")
    other=$(curl -sf -X POST "$kc/v1/admin/clients" "${auth[@]}" -d '{"name":"other","accessGroups":["other.group"]}' |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
    curl -sf -X PUT "$kc/v1/tokens/steady" -H "Authorization: Bearer $other" -H 'Content-Type: application/json' \
        -d '{"accessToken":"steady-token","expiresIn":86400}' >/dev/null
    fetch() { KEYCHAIND_BENCH_TOKEN="$other" wrk -t2 -c8 -d"${duration}s" --timeout 60s --latency -s bench/wrk/auth.lua "$kc/v1/tokens/steady/authorization"; }
    fetch >"$work/idle.wrk"
    # The hung service, set up now so that its first exchange starts with the load: tokens long
    # expired, renewed through the provider that never answers.
    curl -sf -X PUT "$kc/v1/tokens/hung" "${auth[@]}" -d '{"accessToken":"old","expiresAt":"2020-01-01T00:00:00Z"}' >/dev/null
    curl -sf -X PUT "$kc/v1/tokens/hung/refresh" "${auth[@]}" \
        -d '{"tokenEndpoint":"'"$provider"'/token","grant":"client_credentials","clientId":"post-client","clientSecret":"s3cret-post","clientAuth":"post"}' >/dev/null
    KEYCHAIND_BENCH_TOKEN="$admin" wrk -t1 -c"$hung" -d"$((duration + 2))s" --timeout 60s --latency -s bench/wrk/auth.lua \
        "$kc/v1/tokens/hung/authorization" >"$work/hung.wrk" 2>&1 &
    hung_pid=$!
    sleep 1
    fetch >"$work/stalled.wrk"
    wait "$hung_pid" || true

    echo "== $binary"
    echo "other tenant alone:             $(summary "$work/idle.wrk")"
    echo "other tenant, one provider hung: $(summary "$work/stalled.wrk")"
    echo "hung service's callers:          $(summary "$work/hung.wrk"), $(awk '/Non-2xx/ { print $NF " non-2xx" }' "$work/hung.wrk")"
    echo "the hung service's state after:  $(curl -s "$kc/v1/tokens/hung/refresh" -H "Authorization: Bearer $admin" | python3 -c 'import json,sys; r = json.load(sys.stdin); print(r["state"], r["failures"], "failures:", r["lastError"])')"
    kill -TERM "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
done
