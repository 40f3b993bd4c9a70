#!/usr/bin/env bash
# HTTP benchmark, side by side with the bare libmicrohttpd server (the ceiling) in one run:
#   baseline GET /hello (bench/baseline), then keychaind's
#   GET /v1/tokens/{s}/authorization, GET /v1/items/genericPassword?...&return=data,
#   POST /v1/items/genericPassword (a durable add per request),
# alternating, at 1, 8 and 64 connections, for several rounds. Prints a Markdown table with the
# median over the rounds of req/s, p50 and p99, and of each round's ratio to the baseline measured
# just before it (with the range of the req/s ratio): on a shared box throughput drifts by tens of
# percent within a minute, so one pair of measurements says little.
#
# usage: bench/http-bench.sh [seconds per measurement, default 10] [rounds, default 3]
# env:   KEYCHAIND_BENCH_CONFIG="KEY=VALUE ..." extra environment for keychaind (e.g.
#        "KEYCHAIND_AUDIT_ENABLED=false KEYCHAIND_LOG_LEVEL=warning"); defaults are the shipped ones.
# needs: wrk, curl, gcc, libmicrohttpd-dev; builds keychaind in release.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
duration="${1:-10}"
rounds="${2:-3}"
baseline_port=8299
port=18700
bench_workspace

swift build -c release --product keychaind >/dev/null
bash bench/baseline/run.sh "$baseline_port" >"$work/baseline.log" 2>&1 &
pids+=($!)
env ${KEYCHAIND_BENCH_CONFIG:-} .build/release/keychaind serve --listen "127.0.0.1:$port" \
    --data-dir "$work/data" >"$work/keychaind.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$port/v1/health" >/dev/null 2>&1 \
        && curl -sf "http://127.0.0.1:$baseline_port/hello" >/dev/null 2>&1 && break
    sleep 0.2
done
export KEYCHAIND_BENCH_TOKEN="$(cat "$work/data/admin.token")"
auth=(-H "Authorization: Bearer $KEYCHAIND_BENCH_TOKEN" -H "Content-Type: application/json")
curl -sf -X PUT "http://127.0.0.1:$port/v1/tokens/bench" "${auth[@]}" \
    -d '{"accessToken":"eyJhbGciOiJIUzI1NiJ9.bench.access","refreshToken":"bench-refresh"}' >/dev/null
curl -sf -X POST "http://127.0.0.1:$port/v1/items/genericPassword" "${auth[@]}" \
    -d '{"service":"bench","account":"reader","value":"read-me"}' >/dev/null

# measure NAME CONNECTIONS URL [SCRIPT] -> "req/s p50_ms p99_ms errors"
measure() {
    local connections=$2 url=$3 script=${4:-}
    local threads=2
    [ "$connections" -lt 2 ] && threads=1
    local args=(-t"$threads" -c"$connections" -d"${duration}s" --latency)
    [ -n "$script" ] && args+=(-s "$script")
    local out
    out=$(KEYCHAIND_BENCH_RUN="$RANDOM$RANDOM" wrk "${args[@]}" "$url")
    local rps p50 p99 errors
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    p50=$(awk '$1=="50%" {print $2}' <<<"$out")
    p99=$(awk '$1=="99%" {print $2}' <<<"$out")
    errors=$(awk '/Non-2xx/ {print $5}' <<<"$out")
    echo "$rps $(to_ms "$p50") $(to_ms "$p99") ${errors:-0}"
}

echo "## HTTP ($(date -u +%Y-%m-%dT%H:%MZ), ${duration}s per measurement, $rounds rounds, config: ${KEYCHAIND_BENCH_CONFIG:-defaults})"
echo
echo "Machine: $(uname -srm), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "Medians over the rounds; \"vs baseline\" is the median of each round's ratio to the baseline measured just before."
echo
echo "| conns | route | req/s | p50 ms | p99 ms | req/s vs baseline (range) | p99 vs baseline | non-2xx |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
base_url="http://127.0.0.1:$baseline_port/hello"
k="http://127.0.0.1:$port"
routes=(baseline token read add)
for connections in 1 8 64; do
    declare -A rps=() p50=() p99=() rps_ratio=() p99_ratio=() errors=()
    for _ in $(seq 1 "$rounds"); do
        for route in "${routes[@]}"; do
            case $route in
            baseline) url="$base_url"; script="" ;;
            token) url="$k/v1/tokens/bench/authorization"; script=bench/wrk/auth.lua ;;
            read) url="$k/v1/items/genericPassword?service=bench&account=reader&return=data"; script=bench/wrk/auth.lua ;;
            add) url="$k/v1/items/genericPassword"; script=bench/wrk/add.lua ;;
            esac
            read -r r l50 l99 e < <(measure "$route" "$connections" "$url" "$script")
            [ "$route" = baseline ] && { b_rps=$r; b_p99=$l99; }
            rps[$route]+=" $r"; p50[$route]+=" $l50"; p99[$route]+=" $l99"
            rps_ratio[$route]+=" $(ratio "$r" "$b_rps")"; p99_ratio[$route]+=" $(ratio "$l99" "$b_p99")"
            errors[$route]=$(( ${errors[$route]:-0} + e ))
        done
    done
    for route in "${routes[@]}"; do
        case $route in
        baseline) name='baseline `GET /hello`' ;;
        token) name='`GET /v1/tokens/bench/authorization`' ;;
        read) name='`GET /v1/items/genericPassword?…&return=data`' ;;
        add) name='`POST /v1/items/genericPassword`' ;;
        esac
        ratios="1.00"
        [ "$route" != baseline ] && ratios="$(printf '%.2f' "$(median <<<"${rps_ratio[$route]}")") ($(range <<<"${rps_ratio[$route]}"))"
        echo "| $connections | $name | $(median <<<"${rps[$route]}") | $(median <<<"${p50[$route]}") | $(median <<<"${p99[$route]}") | $ratios | $(printf '%.2f' "$(median <<<"${p99_ratio[$route]}")") | ${errors[$route]} |"
    done
    unset rps p50 p99 rps_ratio p99_ratio errors
done
echo
echo "keychaind resident memory after the run: $(awk '/VmRSS/ {print $2, $3}' /proc/"${pids[1]}"/status)"
