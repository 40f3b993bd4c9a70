#!/usr/bin/env bash
# Scale benchmark: a vault of 1,000 and one of 1,000,000 items (filled through the documented bulk
# path, `StorageBench populate`), each served by keychaind in release: time from start to a
# healthy `/v1/health`, random point reads over HTTP at 8 connections (req/s, p50, p99), and the
# server's resident memory after the reads. Prints a Markdown table and the p50 ratio.
#
# usage: bench/scale-bench.sh [seconds per measurement, default 10] [large count, default 1000000]
# needs: wrk, curl; builds keychaind and StorageBench in release. The 1M vault takes ~1 GB of
# temporary disk and about a minute to fill.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
duration="${1:-10}"
large="${2:-1000000}"
port=18701
work="$(mktemp -d)"
server=""
cleanup() {
    [ -n "$server" ] && kill -TERM "$server" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

swift build -c release --product keychaind >/dev/null
swift build -c release --product StorageBench >/dev/null

now_ms() { date +%s%3N; }

echo "## Scale ($(date -u +%Y-%m-%dT%H:%MZ), ${duration}s per measurement, random reads at 8 connections)"
echo
echo "| items | fill (bulk path) | start → healthy | req/s | p50 ms | p99 ms | RSS after reads |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
declare -A p50s
for items in 1000 "$large"; do
    dir="$work/data-$items"
    fill_started=$(now_ms)
    .build/release/StorageBench populate "$dir" "$items" >/dev/null
    fill_seconds=$(awk -v ms=$(( $(now_ms) - fill_started )) 'BEGIN { printf "%.1f s", ms / 1000 }')
    sync
    started=$(now_ms)
    KEYCHAIND_LOG_LEVEL=warning .build/release/keychaind serve --listen "127.0.0.1:$port" --data-dir "$dir" \
        >"$work/server-$items.log" 2>&1 &
    server=$!
    until curl -sf "http://127.0.0.1:$port/v1/health" >/dev/null 2>&1; do sleep 0.01; done
    healthy_ms=$(( $(now_ms) - started ))
    export KEYCHAIND_BENCH_TOKEN="$(cat "$dir/admin.token")" KEYCHAIND_BENCH_ITEMS="$items"
    out=$(wrk -t2 -c8 -d"${duration}s" --latency -s bench/wrk/random-read.lua "http://127.0.0.1:$port/")
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    p50=$(awk '$1=="50%" {print $2}' <<<"$out")
    p99=$(awk '$1=="99%" {print $2}' <<<"$out")
    errors=$(awk '/Non-2xx/ {print $5}' <<<"$out")
    [ -n "$errors" ] && echo "warning: $errors non-2xx answers at $items items" >&2
    to_ms() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /s$/ && v !~ /ms$/) n *= 1000; printf "%.3f", n }'; }
    p50s[$items]=$(to_ms "$p50")
    rss=$(awk '/VmRSS/ {printf "%.1f MB", $2 / 1024}' /proc/$server/status)
    echo "| $items | $fill_seconds | ${healthy_ms} ms | $rps | ${p50s[$items]} | $(to_ms "$p99") | $rss |"
    kill -TERM "$server"; wait "$server" 2>/dev/null || true; server=""
    rm -rf "$dir"
done
echo
awk -v a="${p50s[1000]}" -v b="${p50s[$large]}" -v n="$large" \
    'BEGIN { printf "p50 ratio %d / 1,000 items: %.2f (target ≤ 1.3)\n", n, b / a }'
