#!/usr/bin/env bash
# Paired benchmark: several keychaind servers (different builds, or one build with different
# settings) and the bare libmicrohttpd server, all running side by side, measured in rounds whose
# order rotates, on the token fetch (or the item read, or the durable add). Prints each round, then per server the mean
# and median req/s, the median ratio to the bare server measured in the same round, and the
# server's CPU per request (user + system time from /proc, over the measurements).
#
# This is how before/after numbers in docs/benchmarks.md are taken. On this 2-core box a server's
# throughput moves by tens of percent from minute to minute and differs a few percent between two
# processes of the same build, so compare servers of one run only. An A/A run (the same arm
# twice) shows the spread to expect.
#
# usage: bench/paired-bench.sh [options] ARM [ARM ...]
#   ARM is NAME=BINARY or NAME=BINARY:VAR=VALUE,VAR=VALUE (environment for that server; a value
#   may hold commas, a comma starts a new variable only when NAME= follows it), e.g.
#   bench/paired-bench.sh before=/tmp/keychaind-before after=.build/release/keychaind \
#       quiet=.build/release/keychaind:KEYCHAIND_AUDIT_ENABLED=false
# options: -c CONNECTIONS (64)  -d SECONDS per measurement (4)  -r ROUNDS (10)
#   -p token|read|add|kvread|kvwrite (token)
#   (add: a new item per request; kvread and kvwrite: a KV v2 read of one secret, and a new KV v2
#   secret per request, through the Vault surface with `secret/` aliased to a client's group, with
#   the wrk scripts of bench/peer-bench.sh; p50/p99 are printed too, as writes are judged by their
#   latency)
#   -x NAME[,NAME...]: the token fetch with server-side refresh: every arm's bench token expires in a
#      day, and the named arms also keep it with a refresh setting (never due in the run, so the
#      fetch pays only the due check), e.g. `-x with plain=BIN with=BIN` (docs/benchmarks.md).
#   -e NAME[,NAME...]: the named arms call with a token that expires (a client made with a ttl of a
#      day, in the admin's group) instead of admin.token, which never does: the authenticated path
#      with expiring tokens against static ones, e.g. `-p read -e e1,e2 s1=BIN s2=BIN e1=BIN e2=BIN`.
# needs: wrk, curl, gcc, libmicrohttpd-dev (for the bare server, bench/baseline).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
connections=64 seconds=4 rounds=10 path=token refresh_arms="" expiring_arms=""
while getopts c:d:r:p:x:e: option; do
    case $option in
    c) connections=$OPTARG ;;
    d) seconds=$OPTARG ;;
    r) rounds=$OPTARG ;;
    p) path=$OPTARG ;;
    x) refresh_arms=",$OPTARG," ;;
    e) expiring_arms=",$OPTARG," ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: bench/paired-bench.sh [-c conns] [-d secs] [-r rounds] [-p token|read|add|kvread|kvwrite] NAME=BINARY[:ENV] ..." >&2; exit 2; }
case $path in
token) route=/v1/tokens/bench/authorization script=bench/wrk/auth.lua ;;
read) route="/v1/items/genericPassword?service=bench&account=reader&return=data" script=bench/wrk/auth.lua ;;
add) route=/v1/items/genericPassword script=bench/wrk/add.lua ;;
kvread) route=/v1/secret/data/reader script=bench/wrk/bao-read.lua ;;
kvwrite) route=/v1/secret/data script=bench/wrk/bao-write.lua ;;
*) echo "paired-bench: -p is token, read, add, kvread or kvwrite" >&2; exit 2 ;;
esac

# wrk needs a connection per thread.
wrk_threads=2
[ "$connections" -lt 2 ] && wrk_threads=1

bench_workspace

baseline_port=8299
bash bench/baseline/run.sh "$baseline_port" >"$work/baseline.log" 2>&1 &
pids+=($!)
names=(baseline) ports=("$baseline_port") server_pids=("")
port=18780
for arm in "$@"; do
    name=${arm%%=*} spec=${arm#*=}
    binary=${spec%%:*} settings=""
    [ "$spec" != "$binary" ] && settings=${spec#*:}
    [ -x "$binary" ] || { echo "paired-bench: $binary is not an executable" >&2; exit 2; }
    [[ "$name" =~ ^[A-Za-z0-9_.-]+$ && "$name" != baseline ]] || { echo "paired-bench: bad arm name \"$name\"" >&2; exit 2; }
    variables=()
    [ -n "$settings" ] && mapfile -t variables < <(sed -E 's/,([A-Za-z_][A-Za-z0-9_]*=)/\n\1/g' <<<"$settings")
    [[ "$path" == kv* ]] && variables+=(KEYCHAIND_VAULT_SECRET_MOUNT_ALIAS=true)
    env "${variables[@]}" "$binary" serve --listen "127.0.0.1:$port" --data-dir "$work/$name" >"$work/$name.log" 2>&1 &
    pids+=($!)
    names+=("$name") ports+=("$port") server_pids+=($!)
    port=$((port + 1))
done
for index in "${!names[@]}"; do
    url="http://127.0.0.1:${ports[$index]}"
    [ "$index" = 0 ] && url+="/hello" || url+="/v1/health"
    for _ in $(seq 1 100); do curl -sf "$url" >/dev/null 2>&1 && break; sleep 0.1; done
    if ! curl -sf "$url" >/dev/null 2>&1; then
        echo "paired-bench: ${names[$index]} did not come up; its log:" >&2
        tail -n 5 "$work/${names[$index]}.log" >&2
        exit 1
    fi
    [ "$index" = 0 ] && continue
    token=$(cat "$work/${names[$index]}/admin.token")
    auth=(-H "Authorization: Bearer $token" -H "Content-Type: application/json")
    expiry=""
    [ -n "$refresh_arms" ] && expiry=',"expiresIn":86400'
    curl -sf -X PUT "http://127.0.0.1:${ports[$index]}/v1/tokens/bench" "${auth[@]}" \
        -d '{"accessToken":"eyJhbGciOiJIUzI1NiJ9.bench.access","refreshToken":"bench-refresh"'"$expiry"'}' >/dev/null
    if [[ "$refresh_arms" == *",${names[$index]},"* ]]; then
        curl -sf -X PUT "http://127.0.0.1:${ports[$index]}/v1/tokens/bench/refresh" "${auth[@]}" \
            -d '{"tokenEndpoint":"http://127.0.0.1:9/token","grant":"refresh_token","clientId":"bench","clientSecret":"bench-secret"}' >/dev/null
    fi
    curl -sf -X POST "http://127.0.0.1:${ports[$index]}/v1/items/genericPassword" "${auth[@]}" \
        -d '{"service":"bench","account":"reader","value":"read-me"}' >/dev/null
    cp "$work/${names[$index]}/admin.token" "$work/${names[$index]}/bench.token"
    if [[ "$expiring_arms" == *",${names[$index]},"* ]]; then
        curl -sf -X POST "http://127.0.0.1:${ports[$index]}/v1/admin/clients" "${auth[@]}" \
            -d '{"name":"bench-expiring","accessGroups":["admin"],"ttl":86400}' \
            | sed -n 's/.*"token":"\([^"]*\)".*/\1/p' >"$work/${names[$index]}/bench.token"
        [ -s "$work/${names[$index]}/bench.token" ] || { echo "paired-bench: no expiring token for ${names[$index]}" >&2; exit 1; }
    fi
    if [[ "$path" == kv* ]]; then
        # The Vault surface's caller: a client whose first group is its `secret/` mount.
        curl -sf -X POST "http://127.0.0.1:${ports[$index]}/v1/admin/clients" "${auth[@]}" \
            -d '{"name":"bench-kv","accessGroups":["bench"]}' \
            | sed -n 's/.*"token":"\([^"]*\)".*/\1/p' >"$work/${names[$index]}/bench.token"
        [ -s "$work/${names[$index]}/bench.token" ] || { echo "paired-bench: no KV token for ${names[$index]}" >&2; exit 1; }
        curl -sf -X POST "http://127.0.0.1:${ports[$index]}/v1/secret/data/reader" \
            -H "X-Vault-Token: $(cat "$work/${names[$index]}/bench.token")" -d '{"data":{"value":"read-me"}}' >/dev/null
    fi
done

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
declare -A rps=() ratios=() cpu=() p50=() p99=()
echo "## Paired ($(date -u +%Y-%m-%dT%H:%MZ), $path at $connections connections, ${seconds}s per measurement, $rounds rounds)"
echo
for round in $(seq 1 "$rounds"); do
    baseline_rps=""
    line="round $round:"
    for offset in "${!names[@]}"; do
        index=$(( (offset + round) % ${#names[@]} ))
        name=${names[$index]}
        if [ "$index" = 0 ]; then
            out=$(wrk -t"$wrk_threads" -c"$connections" -d"${seconds}s" "http://127.0.0.1:$baseline_port/hello")
        else
            before=$(cpu_ticks "${server_pids[$index]}")
            out=$(KEYCHAIND_BENCH_TOKEN="$(cat "$work/$name/bench.token")" BAO_BENCH_TOKEN="$(cat "$work/$name/bench.token")" \
                KEYCHAIND_BENCH_RUN="$round" \
                wrk -t"$wrk_threads" -c"$connections" -d"${seconds}s" --latency -s "$script" "http://127.0.0.1:${ports[$index]}$route")
            failed=$(awk '/Non-2xx/ { print $5 }' <<<"$out")
            [ -z "$failed" ] || { echo "paired-bench: $name answered $failed non-2xx" >&2; exit 1; }
            after=$(cpu_ticks "${server_pids[$index]}")
            requests=$(awk '/requests in/ { print $1 }' <<<"$out")
            p50[$name]+=" $(to_ms "$(awk '$1=="50%" { print $2 }' <<<"$out")")"
            p99[$name]+=" $(to_ms "$(awk '$1=="99%" { print $2 }' <<<"$out")")"
            cpu[$name]+=" $(awk -v t=$((after - before)) -v n="$requests" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", t / hz * 1e6 / n }')"
        fi
        r=$(awk '/Requests\/sec/ { print $2 }' <<<"$out")
        rps[$name]+=" $r"
        line+=" $name $r"
        [ "$index" = 0 ] && baseline_rps=$r
    done
    # Each server's ratio to the bare server of its own round (the bare server runs once a round).
    for name in "${names[@]:1}"; do
        ratios[$name]+=" $(ratio "$(tr ' ' '\n' <<<"${rps[$name]}" | tail -1)" "$baseline_rps")"
    done
    echo "$line"
done
echo
echo "| server | req/s, mean | req/s, median | vs the bare server, median | CPU per request, mean µs | p50 ms, median | p99 ms, median |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for name in "${names[@]}"; do
    mean=$(tr ' ' '\n' <<<"${rps[$name]}" | awk 'NF { s += $1; n++ } END { printf "%.0f", s / n }')
    if [ "$name" = baseline ]; then
        echo "| bare libmicrohttpd | $mean | $(median <<<"${rps[$name]}") | 1.00 | | | |"
    else
        cpu_mean=$(tr ' ' '\n' <<<"${cpu[$name]}" | awk 'NF { s += $1; n++ } END { printf "%.2f", s / n }')
        echo "| $name | $mean | $(median <<<"${rps[$name]}") | $(printf '%.2f' "$(median <<<"${ratios[$name]}")") | $cpu_mean | $(median <<<"${p50[$name]}") | $(median <<<"${p99[$name]}") |"
    fi
done
