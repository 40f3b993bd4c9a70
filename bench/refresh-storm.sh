#!/usr/bin/env bash
# Refresh storm: N services (1000) whose tokens all fall due at once, renewed by the background
# refresher from a real OAuth 2.0 token endpoint (Authlib, Tests/IntegrationTests/Support/
# oauth_server.py, client_credentials), while wrk fetches another service's token. Prints: token
# endpoint calls against N (one exchange each), how long the storm took, and the fetch latency
# (p50/p99) of the other service when idle and during the storm (docs/benchmarks.md).
#
# usage: bench/refresh-storm.sh [SERVICES (1000)] [BINARY (.build/release/keychaind)]
# needs: wrk, curl, /usr/bin/python3 with authlib and flask (scripts/bootstrap --test).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
services=${1:-1000}
binary=${2:-.build/release/keychaind}
bench_workspace

/usr/bin/python3 Tests/IntegrationTests/Support/oauth_server.py >"$work/oauth.out" 2>/dev/null &
pids+=($!)
for _ in $(seq 1 600); do grep -q listening "$work/oauth.out" 2>/dev/null && break; sleep 0.1; done
provider="http://127.0.0.1:$(awk '{ print $2 }' "$work/oauth.out")"

port=$((20000 + RANDOM % 20000))
KEYCHAIND_REFRESH_INTERVAL_SECONDS=1 KEYCHAIND_LOG_LEVEL=warning \
    "$binary" serve --listen "127.0.0.1:$port" --data-dir "$work/data" >"$work/keychaind.log" 2>&1 &
pids+=($!)
kc="http://127.0.0.1:$port"
for _ in $(seq 1 600); do curl -sf "$kc/v1/health" >/dev/null 2>&1 && break; sleep 0.1; done
token=$(cat "$work/data/admin.token")
auth=(-H "Authorization: Bearer $token" -H "Content-Type: application/json")

# The service wrk fetches: no refresh setting, valid for a day.
curl -sf -X PUT "$kc/v1/tokens/steady" "${auth[@]}" -d '{"accessToken":"steady-token","expiresIn":86400}' >/dev/null

# N services whose tokens all expire at the same moment, renewed 60 s ahead: all due at once,
# DUE seconds (150, env REGISTER_SECONDS) after the start of the registration.
due=$(( $(date +%s) + ${REGISTER_SECONDS:-150} ))
expires=$(date -u -d "@$((due + 60))" +%Y-%m-%dT%H:%M:%SZ)
setting='{"tokenEndpoint":"'"$provider"'/token","grant":"client_credentials","clientId":"post-client","clientSecret":"s3cret-post","clientAuth":"post","refreshBefore":60}'
for i in $(seq 1 "$services"); do
    curl -sf -X PUT "$kc/v1/tokens/storm-$i" "${auth[@]}" -d '{"accessToken":"old-'"$i"'","expiresAt":"'"$expires"'"}' >/dev/null
    curl -sf -X PUT "$kc/v1/tokens/storm-$i/refresh" "${auth[@]}" -d "$setting" >/dev/null
done
[ "$(date +%s)" -lt "$due" ] || { echo "refresh-storm: registration outlasted REGISTER_SECONDS; raise it" >&2; exit 1; }

fetch() { KEYCHAIND_BENCH_TOKEN="$token" wrk -t2 -c16 -d"$1s" --latency -s bench/wrk/auth.lua "$kc/v1/tokens/steady/authorization"; }
idle=$(fetch 8)
calls_before=$(curl -sf "$provider/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["calls"])')
# Wait until the storm is due, then measure fetches while it runs.
while [ "$(date +%s)" -lt "$due" ]; do sleep 0.2; done
started=$(date +%s.%N)
fetch 12 >"$work/storm.wrk" &
wrk_pid=$!
refreshed=0
while [ "${refreshed:-0}" -lt "$services" ]; do
    refreshed=$(curl -sf "$kc/v1/metrics" "${auth[@]}" | awk '/^keychaind_token_refresh_total\{outcome="refreshed"\}/ { print $2 }')
    [ "$(awk -v s="$started" -v n="$(date +%s.%N)" 'BEGIN { print (n - s > 300) }')" = 1 ] && break
    sleep 0.2
done
finished=$(date +%s.%N)
wait "$wrk_pid" || true
storm=$(cat "$work/storm.wrk")
calls=$(( $(curl -sf "$provider/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["calls"])') - calls_before ))

latency() { awk -v p="$2" '$1 == p { print $2 }' <<<"$1"; }
echo "## Refresh storm ($(date -u +%Y-%m-%dT%H:%MZ), $services services due at once, $(basename "$binary"))"
echo
echo "| measure | value |"
echo "| --- | --- |"
echo "| services refreshed | ${refreshed:-0} of $services |"
echo "| token endpoint calls during the storm | $calls |"
echo "| storm duration | $(awk -v s="$started" -v f="$finished" 'BEGIN { printf "%.1f s", f - s }') |"
echo "| other service's fetch p50, idle → storm | $(to_ms "$(latency "$idle" 50%)") ms → $(to_ms "$(latency "$storm" 50%)") ms |"
echo "| other service's fetch p99, idle → storm | $(to_ms "$(latency "$idle" 99%)") ms → $(to_ms "$(latency "$storm" 99%)") ms |"
