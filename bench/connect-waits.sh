#!/usr/bin/env bash
# Connect waits and everyone else: WAITERS (1024) long-polls of pending connect sessions
# (`GET /v1/connect/{id}?wait=25`, asked again as soon as answered; 64 clients holding 16 each,
# `connect.maxWaitsPerClient`'s default) held open while wrk measures a token fetch (8
# connections). Prints, for each round, the fetch's rate and latency alone and with the waits
# held, the p99 ratio, and keychaind's CPU while only the waits are held; then what the waiters got. Waits hold no worker thread (the transport
# suspends them), so the fetch's p99 should stay within 2x of its idle p99.
#
# usage: bench/connect-waits.sh [seconds per measurement, default 20] [rounds, default 3]
# env: WAITERS (1024)
# needs: wrk, curl, python3; builds keychaind in release.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
duration="${1:-20}"
rounds="${2:-3}"
waiters=${WAITERS:-1024}
clients=64
bench_workspace

# Every waiter is a connection from 127.0.0.1: lift the per-address and total connection limits.
bench_serve_one kc KEYCHAIND_LIMITS_MAX_CONNECTIONS=8192 KEYCHAIND_LIMITS_MAX_CONNECTIONS_PER_ADDRESS=0 \
    KEYCHAIND_SERVER_PUBLIC_URL=http://127.0.0.1:8443
kc="http://127.0.0.1:$port"
admin=$(cat "$work/kc/admin.token")
auth=(-H "Authorization: Bearer $admin" -H "Content-Type: application/json")
# A provider no browser will reach: the sessions stay pending.
curl -sf -X PUT "$kc/v1/admin/providers/bench" "${auth[@]}" -d '{"authorizationEndpoint":"http://127.0.0.1:9/authorize",
    "tokenEndpoint":"http://127.0.0.1:9/token","clientId":"bench","clientSecret":"bench-secret","accessGroups":["team"]}' >/dev/null
pairs=()
for i in $(seq 1 "$clients"); do
    token=$(curl -sf -X POST "$kc/v1/admin/clients" "${auth[@]}" -d '{"name":"waiter'"$i"'","accessGroups":["team"]}' |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
    session=$(curl -sf -X POST "$kc/v1/connect" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
        -d '{"provider":"bench","service":"svc'"$i"'"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["connectId"])')
    for _ in $(seq 1 $((waiters / clients))); do pairs+=("$token:$session"); done
done
curl -sf -X PUT "$kc/v1/tokens/steady" "${auth[@]}" -d '{"accessToken":"steady-token","expiresIn":86400}' >/dev/null
fetch() {
    KEYCHAIND_BENCH_TOKEN="$admin" wrk -t2 -c8 -d"${duration}s" --latency -s bench/wrk/auth.lua "$kc/v1/tokens/steady/authorization"
}
# rate, p50, p99 (ms) of a wrk --latency report
numbers() {
    echo "$(awk '/^Requests\/sec/ { printf "%.0f", $2 }' "$1") $(to_ms "$(awk '$1 == "50%" { print $2 }' "$1")") $(to_ms "$(awk '$1 == "99%" { print $2 }' "$1")")"
}

echo "## Connect waits ($(date -u +%Y-%m-%dT%H:%MZ), ${duration}s per measurement, $rounds rounds, $waiters waits held)"
echo
echo "| round | fetch alone (req/s, p50, p99 ms) | fetch with the waits held | p99 ratio | keychaind CPU, waits held alone |"
echo "| --- | --- | --- | --- | --- |"
ratios=""
for round in $(seq 1 "$rounds"); do
    fetch >"$work/idle.wrk"
    python3 bench/connect_waiters.py "$port" "$((duration + 8))" 25 "${pairs[@]}" >"$work/waiters.out" &
    held=$!
    until grep -q holding "$work/waiters.out" 2>/dev/null; do sleep 0.1; done
    sleep 1
    # keychaind's CPU over 3 s with only the waits held (clock ticks of user + system time).
    before=$(awk '{ print $14 + $15 }' "/proc/$server/stat")
    sleep 3
    held_cpu=$(( $(awk '{ print $14 + $15 }' "/proc/$server/stat") - before ))
    fetch >"$work/loaded.wrk"
    wait "$held"
    read -r idle_rate idle_p50 idle_p99 <<<"$(numbers "$work/idle.wrk")"
    read -r rate p50 p99 <<<"$(numbers "$work/loaded.wrk")"
    r=$(ratio "$p99" "$idle_p99")
    ratios+=" $r"
    echo "| $round | $idle_rate, $idle_p50, $idle_p99 | $rate, $p50, $p99 | $r | $(( held_cpu * 1000 / $(getconf CLK_TCK) / 3 )) ms/s |"
    tail -1 "$work/waiters.out" >"$work/waiters.last"
done
echo
echo "p99 ratio: median $(echo "$ratios" | median), range $(echo "$ratios" | range)"
echo "waiters (last round): $(cat "$work/waiters.last")"
