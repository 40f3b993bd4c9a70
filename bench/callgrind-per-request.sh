#!/usr/bin/env bash
# Instructions per request, by callgrind: each binary is served under `valgrind --tool=callgrind`
# with one libmicrohttpd worker, warmed up, then its counters are zeroed, wrk sends requests for a
# while, the counters are dumped, and the dump's total instructions (Ir) are divided by the
# requests wrk completed. The binaries run one after another, so they do not disturb each other.
# The count moves by a few hundred instructions from run to run: the server's background threads
# (the line batcher's, the header deadline's) work by the second, not by the request, and under
# valgrind the request rate follows the machine's load. So arms alternate for several rounds and
# the median is what to compare.
#
# usage: bench/callgrind-per-request.sh [-p token|read|kv|add|kvwrite] [-d SECONDS] [-r ROUNDS] [-k DIR] [-s] NAME=BINARY ...
#   -p  the route: token (GET /v1/tokens/bench/authorization, default), read (one item, return=data),
#       kv (GET /v1/bench/data/reader, a KV v2 read on the Vault surface with X-Vault-Token),
#       add (POST /v1/items/genericPassword, a durable add of a new item each time) or kvwrite
#       (POST /v1/secret/data/<new path>, a KV v2 write of a new secret, `secret/` aliased)
#   -d  seconds of measured load (8); -r rounds (3)
#   -k  keeps each dump as DIR/NAME.ROUND.callgrind (for callgrind_annotate)
#   -s  also simulates the caches and branch predictors (`--cache-sim=yes --branch-sim=yes`, about
#       twice as slow) and prints per request: instruction-cache misses (I1mr), data-cache misses
#       (D1mr + D1mw), mispredicted conditional and indirect branches (Bcm, Bim), and the calls to
#       swift_retain and swift_release (atomic read-modify-writes each). Two builds can run the
#       same instructions and still differ in these, which is time that Ir does not show.
# needs: valgrind, wrk, curl.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
path=token seconds=8 rounds=3 keep="" simulate=""
while getopts p:d:r:k:s option; do
    case $option in
    p) path=$OPTARG ;;
    d) seconds=$OPTARG ;;
    r) rounds=$OPTARG ;;
    k) keep=$OPTARG ;;
    s) simulate="--cache-sim=yes --branch-sim=yes" ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: bench/callgrind-per-request.sh [-p token|read|kv|add|kvwrite] [-d secs] [-r rounds] [-k dir] [-s] NAME=BINARY ..." >&2; exit 2; }
case $path in
token) route=/v1/tokens/bench/authorization ;;
read) route="/v1/items/genericPassword?service=bench&account=reader&return=data" ;;
kv) route=/v1/bench/data/reader ;;
add | kvwrite) route=/ ;; # the wrk script names a new path for each request
*) echo "callgrind-per-request: -p is token, read, kv, add or kvwrite" >&2; exit 2 ;;
esac
case $path in
kv) script=bench/wrk/bao-read.lua ;;
add) script=bench/wrk/add.lua ;;
kvwrite) script=bench/wrk/bao-write.lua ;;
*) script=bench/wrk/auth.lua ;;
esac
[ -z "$keep" ] || mkdir -p "$keep"

# The simulated events and reference-count calls of a dump, per request, as table cells.
simulated_per_request() {
    python3 - "$1" "$2" <<'PY'
import re, sys
events, totals, names, callee, calls = [], [], {}, None, {"swift_retain": 0, "swift_release": 0}
for line in open(sys.argv[1], errors="replace"):
    if line.startswith("events:"):
        events = line.split()[1:]
    elif line.startswith("summary:"):
        totals = [int(value) for value in line.split()[1:]]
    elif line.startswith(("fn=", "cfn=")):
        # Names are compressed: given once, with the first mention of their number.
        match = re.match(r"c?fn=\((\d+)\)(?: (.*))?", line.rstrip("\n"))
        if match.group(2):
            names[match.group(1)] = match.group(2)
        if line.startswith("cfn="):
            callee = match.group(1)
    elif line.startswith("calls=") and names.get(callee) in calls:
        calls[names[callee]] += int(line.split()[0][6:])
requests = float(sys.argv[2])
event = dict(zip(events, totals))
cells = [event["I1mr"], event["D1mr"] + event["D1mw"], event["Bcm"], event["Bim"], calls["swift_retain"], calls["swift_release"]]
print(" | ".join(f"{value / requests:.0f}" for value in cells))
PY
}

bench_workspace
declare -A counts=()
simulated=""
echo "| round | server | route | requests | Ir | Ir per request |"
echo "| --- | --- | --- | --- | --- | --- |"
for round in $(seq 1 "$rounds"); do
for arm in "$@"; do
    name=${arm%%=*} binary=${arm#*=}
    [ -x "$binary" ] || { echo "callgrind-per-request: $binary is not an executable" >&2; exit 2; }
    # Deterministic hashing: dictionary probes then cost the same in every run.
    SWIFT_DETERMINISTIC_HASHING=1 KEYCHAIND_THREADS=1 KEYCHAIND_VAULT_SECRET_MOUNT_ALIAS=true valgrind --tool=callgrind $simulate --callgrind-out-file="$work/$name.out.%p" \
        "$binary" serve --listen 127.0.0.1:0 --data-dir "$work/$name.$round" >"$work/$name.log" 2>&1 &
    server=$!
    pids+=("$server")
    # The port the server chose, from its start line (a fixed port might be another process's).
    port=""
    for _ in $(seq 1 300); do
        port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$work/$name.log")
        [ -n "$port" ] && break
        sleep 0.2
    done
    url="http://127.0.0.1:$port"
    for _ in $(seq 1 150); do curl -sf -m 5 "$url/v1/health" >/dev/null 2>&1 && break; sleep 0.2; done
    curl -sf "$url/v1/health" >/dev/null || { echo "callgrind-per-request: $name did not come up" >&2; tail -n 5 "$work/$name.log" >&2; exit 1; }
    token=$(cat "$work/$name.$round/admin.token")
    auth=(-H "Authorization: Bearer $token" -H "Content-Type: application/json")
    curl -sf -X PUT "$url/v1/tokens/bench" "${auth[@]}" \
        -d '{"accessToken":"eyJhbGciOiJIUzI1NiJ9.bench.access","refreshToken":"bench-refresh"}' >/dev/null
    curl -sf -X POST "$url/v1/items/genericPassword" "${auth[@]}" \
        -d '{"service":"bench","account":"reader","value":"read-me"}' >/dev/null
    export KEYCHAIND_BENCH_TOKEN="$token"
    if [ "$path" = kv ] || [ "$path" = kvwrite ]; then
        # The Vault surface's caller: a client of its own group (the admin's, `admin`, is no mount).
        BAO_BENCH_TOKEN=$(curl -sf -X POST "$url/v1/admin/clients" "${auth[@]}" -d '{"name":"bench","accessGroups":["bench"]}' \
            | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
        export BAO_BENCH_TOKEN
        curl -sf -X POST "$url/v1/bench/data/reader" -H "X-Vault-Token: $BAO_BENCH_TOKEN" -d '{"data":{"value":"read-me"}}' >/dev/null
    fi
    KEYCHAIND_BENCH_RUN=warm wrk -t1 -c4 -d3s -s "$script" "$url$route" >/dev/null
    callgrind_control -z "$server" >/dev/null 2>&1
    out=$(KEYCHAIND_BENCH_RUN=measured wrk -t1 -c4 -d"${seconds}s" -s "$script" "$url$route")
    callgrind_control -d "$server" >/dev/null 2>&1
    requests=$(awk '/requests in/ { print $1 }' <<<"$out")
    non2xx=$(awk '/Non-2xx/ { print $5 }' <<<"$out")
    [ -z "$non2xx" ] || { echo "callgrind-per-request: $name answered $non2xx non-2xx" >&2; exit 1; }
    dump=$(ls -t "$work/$name.out.$server".* | head -1)
    instructions=$(awk '/^(summary|totals):/ { print $2; exit }' "$dump")
    [ -z "$keep" ] || cp "$dump" "$keep/$name.$round.callgrind"
    per=$(awk -v i="$instructions" -v n="$requests" 'BEGIN { printf "%.0f", i / n }')
    counts[$name]+=" $per"
    echo "| $round | $name | $path | $requests | $instructions | $per |"
    [ -z "$simulate" ] || simulated+="| $round | $name | $(simulated_per_request "$dump" "$requests") |"$'\n'
    kill -TERM "$server"
    wait "$server" 2>/dev/null || true
done
done
echo
echo "| server | route | Ir per request, median | range |"
echo "| --- | --- | --- | --- |"
for arm in "$@"; do
    name=${arm%%=*}
    echo "| $name | $path | $(median <<<"${counts[$name]}") | $(range <<<"${counts[$name]}") |"
done
if [ -n "$simulate" ]; then
    echo
    echo "| round | server | I1 misses | D1 misses | cond. branch misses | indirect branch misses | swift_retain | swift_release |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
    printf '%s' "$simulated"
fi
