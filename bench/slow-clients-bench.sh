#!/usr/bin/env bash
# Slow clients against a normal one: the latency of an item read
# (GET /v1/items/genericPassword?...&return=data) at one connection, on the idle server and then
# while N slow clients each hold a connection and send their request head a byte a second, never
# finishing. Prints p50 and p99 both ways. The hardening test
# (HostileHTTPTests.slowClientsDoNotStarveNormalClients) only asserts that every normal read is
# answered while the slow clients hold on; how much they cost in latency is measured here.
#
# usage: bench/slow-clients-bench.sh [slow clients, default 100] [seconds per measurement, default 10]
# needs: wrk, curl; builds keychaind in release.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
slow="${1:-100}"
duration="${2:-10}"
port=18790
bench_workspace

swift build -c release --product keychaind >/dev/null
KEYCHAIND_LIMITS_MAX_CONNECTIONS=$((slow + 64)) .build/release/keychaind serve --listen "127.0.0.1:$port" \
    --data-dir "$work/data" >"$work/keychaind.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$port/v1/health" >/dev/null 2>&1 && break
    sleep 0.2
done
token="$(cat "$work/data/admin.token")"
curl -sf -X POST "http://127.0.0.1:$port/v1/items/genericPassword" -H "Authorization: Bearer $token" \
    -H "Content-Type: application/json" -d '{"service":"bench","account":"reader","value":"read-me"}' >/dev/null
url="http://127.0.0.1:$port/v1/items/genericPassword?service=bench&account=reader&return=data"

# measure -> "p50_ms p99_ms req/s"
measure() {
    local out
    out=$(wrk -t1 -c1 -d"${duration}s" --latency -H "Authorization: Bearer $token" "$url")
    echo "$(to_ms "$(awk '$1=="50%" {print $2}' <<<"$out")") $(to_ms "$(awk '$1=="99%" {print $2}' <<<"$out")")" \
        "$(awk '/Requests\/sec/ {print $2}' <<<"$out")"
}

# N connections, each with the start of a request head, then one more byte a second on each.
slow_clients() {
    local fds=() fd
    for _ in $(seq 1 "$slow"); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$port"
        printf 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ' >&"$fd"
        fds+=("$fd")
    done
    touch "$work/slow-clients-ready"
    while true; do
        sleep 1
        for fd in "${fds[@]}"; do printf s >&"$fd" 2>/dev/null || true; done
    done
}

read -r idle_p50 idle_p99 idle_rps < <(measure)
slow_clients &
pids+=($!)
until [ -e "$work/slow-clients-ready" ]; do sleep 0.1; done
read -r loaded_p50 loaded_p99 loaded_rps < <(measure)

echo "## Slow clients ($(date -u +%Y-%m-%dT%H:%MZ), $slow slow connections, ${duration}s per measurement)"
echo
echo "| server | req/s | p50 ms | p99 ms |"
echo "| --- | --- | --- | --- |"
echo "| idle | $idle_rps | $idle_p50 | $idle_p99 |"
echo "| with $slow slow clients | $loaded_rps | $loaded_p50 | $loaded_p99 |"
echo
echo "p99 loaded / idle: $(ratio "$loaded_p99" "$idle_p99")"
