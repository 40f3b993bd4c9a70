#!/usr/bin/env bash
# PostgreSQL benchmark (issue 31): one keychaind node over PostgreSQL against one over SQLite, and
# three nodes over the same PostgreSQL against one, all in one run, measured in alternating
# rounds (each round measures every arm on each work, in an order that rotates):
#   token fetch   GET /v1/tokens/bench/authorization
#   random read   GET /v1/items/genericPassword?service=service-i&account=account-i&return=data,
#                 i at random among 1,000 items (bench/wrk/random-read.lua; on SQLite these are
#                 find-cache hits, on PostgreSQL every read is a query)
#   durable add   POST /v1/items/genericPassword, a new key per request (bench/wrk/add.lua); only
#                 2xx answers count
# Arms: `sqlite` (one node), `pg-1` (one node over PostgreSQL), `pg-3` (three nodes over the same
# database, one wrk per node, the connections split between them; p50 is the median of the
# nodes', p99 the worst node's). The nodes of `pg-3` other than the first idle while `pg-1` runs.
#
# On a 2-core box the arms share the cores with wrk and with PostgreSQL, so three nodes cannot add
# throughput. What carries over to nodes on separate machines is the CPU each request costs:
# keychaind's (utime + stime from /proc/PID/stat of the nodes measured) and the database's (the
# same summed over the cluster's processes: the postmaster, with its reaped children, and every
# backend). From them the table predicts a node's ceiling on two cores of its own, and how many
# such nodes one database machine of the same size serves before the database is the bound
# (keychaind µs ÷ postgres µs). Network round trips (loopback here) are not in it.
#
# The PostgreSQL cluster is a throwaway one (initdb, pg_ctl; as the `postgres` user through
# runuser when run as root) on a free loopback port, fsync and synchronous_commit on (the
# defaults): a durable add is acknowledged after its commit is flushed, as on SQLite. Every
# process the script starts (the cluster, the nodes, wrk) is stopped by PID when it exits,
# whatever happens.
#
# usage: bench/pg-bench.sh [-c CONNECTIONS (64)] [-d SECONDS per measurement (4)] [-r ROUNDS (6)]
# env:   KEYCHAIND=BINARY measures that build (else this tree's release build, built here; with
#        KEYCHAIND_SCRATCH=DIR into that scratch path).
# needs: wrk, curl, python3, PostgreSQL's server (Debian `postgresql`); scripts/bootstrap --bench
# installs them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
connections=64 seconds=4 rounds=6
while getopts c:d:r: option; do
    case $option in
    c) connections=$OPTARG ;;
    d) seconds=$OPTARG ;;
    r) rounds=$OPTARG ;;
    *) echo "usage: bench/pg-bench.sh [-c connections] [-d seconds] [-r rounds]" >&2; exit 2 ;;
    esac
done
[ "$connections" -ge 3 ] || { echo "pg-bench: -c needs at least 3 (one per node of pg-3)" >&2; exit 2; }
scripts/bootstrap --bench
bench_build_keychaind
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

pgbin=$(pg_config --bindir)
[ -x "$pgbin/pg_ctl" ] || pgbin=$(dirname "$(compgen -G '/usr/lib/postgresql/*/bin/pg_ctl' | sort -V | tail -n 1)")
[ -x "$pgbin/pg_ctl" ] || { echo "pg-bench: no pg_ctl (install Debian's postgresql)" >&2; exit 1; }

bench_workspace
pgdir="" pg_pid="" wrk_pids=()
as_postgres() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
# Stops the cluster: a fast shutdown, then an immediate one, then SIGKILL, by the postmaster's PID.
pg_stop() {
    [ -n "$pg_pid" ] || return 0
    timeout 30 bash -c "$(declare -f as_postgres); as_postgres '$pgbin/pg_ctl' -D '$pgdir/data' -m fast -w stop" \
        >/dev/null 2>&1 || true
    for signal in QUIT KILL; do
        kill -0 "$pg_pid" 2>/dev/null || break
        kill -"$signal" "$pg_pid" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$pg_pid" 2>/dev/null || break; sleep 0.1; done
    done
    pg_pid=""
}
pg_bench_cleanup() {
    local status=$?
    if [ "$status" -ne 0 ] && [ -d "$work" ]; then
        # What the nodes and the last wrk runs said, before $work goes.
        for log in "$work"/*.log "$work"/wrk-*.out; do
            [ -f "$log" ] && { echo "pg-bench: the end of $(basename "$log"):" >&2; tail -n 5 "$log" >&2; }
        done
    fi
    for pid in "${wrk_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    bench_cleanup   # the nodes (they hold connections), then $work
    pg_stop
    [ -n "$pgdir" ] && rm -rf "$pgdir"
}
trap pg_bench_cleanup EXIT
trap 'exit 130' INT TERM

# The throwaway cluster, started as the tests start theirs (ThrowawayPostgres in KeychainTestSupport).
pgdir=$(mktemp -d)
[ "$(id -u)" -eq 0 ] && chown postgres: "$pgdir"
pgport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_postgres "$pgbin/initdb" -D "$pgdir/data" -U keychaind -A trust -E UTF8 --no-locale --no-sync >/dev/null
as_postgres "$pgbin/pg_ctl" -D "$pgdir/data" -l "$pgdir/log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $pgport -c unix_socket_directories=$pgdir" start >/dev/null
pg_pid=$(head -n 1 "$pgdir/data/postmaster.pid")
psql -q "host=127.0.0.1 port=$pgport user=keychaind dbname=postgres" -c 'CREATE DATABASE keychaind' >/dev/null
pg_url="host=127.0.0.1 port=$pgport user=keychaind dbname=keychaind"
pg_env=(KEYCHAIND_STORAGE_BACKEND=postgresql "KEYCHAIND_STORAGE_POSTGRESQL_URL=$pg_url")

# The nodes: SQLite; the first PostgreSQL node initialises the database, the other two join with a
# copy of its master.key.
declare -A node_port node_pid
bench_serve_one sqlite
node_port[sqlite]=$port node_pid[sqlite]=$server
bench_serve_one pg1 "${pg_env[@]}"
node_port[pg1]=$port node_pid[pg1]=$server
for name in pg2 pg3; do
    install -d -m 0700 "$work/$name"
    install -m 0600 "$work/pg1/master.key" "$work/$name/master.key"
    bench_serve_one "$name" "${pg_env[@]}"
    node_port[$name]=$port node_pid[$name]=$server
done
sqlite_token=$(cat "$work/sqlite/admin.token") pg_token=$(cat "$work/pg1/admin.token")

# The same token and 1,000 items in each store (the PostgreSQL one through its first node).
items=1000
for target in "${node_port[sqlite]} $sqlite_token" "${node_port[pg1]} $pg_token"; do
    read -r target_port target_token <<<"$target"
    PYTHONPATH=bench python3 - "$target_port" "$target_token" "$items" <<'PY'
import sys
from keychaind_http import Keychaind
port, token, items = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
call = Keychaind(port).call
call("PUT", "/v1/tokens/bench", token,
     {"accessToken": "eyJhbGciOiJIUzI1NiJ9.bench.access", "refreshToken": "bench-refresh"})
for i in range(items):
    call("POST", "/v1/items/genericPassword", token,
         {"service": f"service-{i}", "account": f"account-{i}", "value": f"secret-{i}"})
PY
done
# Every node reads what the first wrote.
for name in pg2 pg3; do
    curl -sf "http://127.0.0.1:${node_port[$name]}/v1/items/genericPassword?service=service-7&account=account-7&return=data" \
        -H "Authorization: Bearer $pg_token" | grep -q secret-7 \
        || { echo "pg-bench: $name does not read the first node's item" >&2; exit 1; }
done

hz=$(getconf CLK_TCK)
ticks() { local total=0 pid; for pid in "$@"; do total=$((total + $(awk '{ print $14 + $15 }' "/proc/$pid/stat"))); done; echo "$total"; }
# The cluster's CPU ticks: the postmaster's own and its reaped children's, and each live child's.
pg_ticks() {
    # (processes of the box end between the glob and the read: not an error)
    { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v pm="$pg_pid" '
        { pid = $1; sub(/^.*\) /, "") }   # now $1 is the state, $2 the parent, $12.. utime stime cutime cstime
        pid == pm { t += $12 + $13 + $14 + $15 }
        $2 == pm { t += $12 + $13 }
        END { print t + 0 }'
}

arms=(sqlite pg-1 pg-3)
jobs=(token read add)
declare -A rps=() ratio_sqlite=() p50=() p99=() k_cpu=() db_cpu=() non2xx=() last_rps=()
# measure ARM JOB ROUND: one measurement; appends to the arrays above.
measure() {
    local arm=$1 job=$2 round=$3 nodes token route script
    case $arm in
    sqlite) nodes=(sqlite) token=$sqlite_token ;;
    pg-1) nodes=(pg1) token=$pg_token ;;
    pg-3) nodes=(pg1 pg2 pg3) token=$pg_token ;;
    esac
    case $job in
    token) route=/v1/tokens/bench/authorization script=bench/wrk/auth.lua ;;
    read) route=/ script=bench/wrk/random-read.lua ;;
    add) route=/v1/items/genericPassword script=bench/wrk/add.lua ;;
    esac
    local node_pids=() name
    for name in "${nodes[@]}"; do node_pids+=("${node_pid[$name]}"); done
    local k_before db_before index=0 share
    k_before=$(ticks "${node_pids[@]}") db_before=$(pg_ticks)
    wrk_pids=()
    for name in "${nodes[@]}"; do
        # The connections split between the nodes; wrk needs one per thread.
        share=$(( connections / ${#nodes[@]} + (index < connections % ${#nodes[@]} ? 1 : 0) ))
        KEYCHAIND_BENCH_TOKEN="$token" KEYCHAIND_BENCH_ITEMS="$items" KEYCHAIND_BENCH_RUN="$round-$arm-$name" \
            wrk -t"$([ "${#nodes[@]}" -gt 1 ] && echo 1 || echo 2)" -c"$share" -d"${seconds}s" --latency -s "$script" \
            "http://127.0.0.1:${node_port[$name]}$route" >"$work/wrk-$name.out" 2>&1 &
        wrk_pids+=($!)
        index=$((index + 1))
    done
    for pid in "${wrk_pids[@]}"; do wait "$pid" || true; done   # its output says what went wrong
    wrk_pids=()
    local k_after db_after
    for name in "${nodes[@]}"; do
        kill -0 "${node_pid[$name]}" 2>/dev/null || { echo "pg-bench: node $name exited during $arm $job" >&2; exit 1; }
    done
    k_after=$(ticks "${node_pids[@]}") db_after=$(pg_ticks)
    local ok=0 failed=0 rate=0 node_p50="" worst_p99=0 out total bad secs
    for name in "${nodes[@]}"; do
        out=$(cat "$work/wrk-$name.out")
        total=$(awk '/requests in/ { print $1 }' <<<"$out")
        secs=$(awk '/requests in/ { sub(/s,?$/, "", $4); print $4 }' <<<"$out")
        bad=$(awk '/Non-2xx/ { print $5 }' <<<"$out")
        [ -n "$total" ] || { echo "pg-bench: wrk against $name failed:" >&2; cat "$work/wrk-$name.out" >&2; exit 1; }
        ok=$((ok + total - ${bad:-0})) failed=$((failed + ${bad:-0}))
        rate=$(awk -v r="$rate" -v n="$((total - ${bad:-0}))" -v s="$secs" 'BEGIN { printf "%.0f", r + n / s }')
        node_p50+=" $(to_ms "$(awk '$1=="50%" { print $2 }' <<<"$out")")"
        worst_p99=$(awk -v a="$worst_p99" -v b="$(to_ms "$(awk '$1=="99%" { print $2 }' <<<"$out")")" 'BEGIN { print (b > a ? b : a) }')
    done
    local key="$job|$arm"
    rps[$key]+=" $rate"; last_rps[$key]=$rate
    p50[$key]+=" $(median <<<"$node_p50")"; p99[$key]+=" $worst_p99"
    non2xx[$key]=$(( ${non2xx[$key]:-0} + failed ))
    k_cpu[$key]+=" $(awk -v t=$((k_after - k_before)) -v n="$ok" -v hz="$hz" 'BEGIN { printf "%.2f", (n ? t / hz * 1e6 / n : 0) }')"
    db_cpu[$key]+=" $(awk -v t=$((db_after - db_before)) -v n="$ok" -v hz="$hz" 'BEGIN { printf "%.2f", (n ? t / hz * 1e6 / n : 0) }')"
    echo -n " $arm $rate"
}

echo "## PostgreSQL ($(date -u +%Y-%m-%dT%H:%MZ), $connections connections, ${seconds}s per measurement, $rounds alternating rounds)"
echo
echo "Machine: $(uname -srm), $(nproc) cores; $("$pgbin/postgres" --version); keychaind $("$KEYCHAIND" --version 2>/dev/null || echo "($KEYCHAIND)"); load before: $load_before"
echo
for round in $(seq 1 "$rounds"); do
    for job in "${jobs[@]}"; do
        echo -n "round $round, $job:"
        for offset in "${!arms[@]}"; do
            measure "${arms[$(( (offset + round) % ${#arms[@]} ))]}" "$job" "$round"
        done
        for arm in pg-1 pg-3; do
            key="$job|$arm"
            ratio_sqlite[$key]+=" $(ratio "${last_rps[$key]}" "${last_rps[$job|sqlite]}")"
        done
        echo
    done
done
backends=$(psql -qtA "$pg_url" -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'keychaind'")
echo
echo "Load after: $(cut -d' ' -f1-3 /proc/loadavg). PostgreSQL connections held by the three nodes ($(nproc) cores, threads = 0): $backends."
echo "Medians over the rounds; CPU is per 2xx answer."
echo
echo "| work | arm | 2xx req/s (range) | × SQLite | p50 / p99 ms | keychaind CPU µs/req | postgres CPU µs/req | database's share | one node on 2 cores of its own, req/s | nodes one equal database machine serves | non-2xx |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for job in "${jobs[@]}"; do
    case $job in
    token) label="token fetch" ;;
    read) label="random read (1,000 items)" ;;
    add) label="durable add" ;;
    esac
    for arm in "${arms[@]}"; do
        key="$job|$arm"
        k=$(printf '%.1f' "$(median <<<"${k_cpu[$key]}")")
        times="1.00" db="—" share="—" nodes="—"
        ceiling=$(awk -v k="$k" 'BEGIN { printf "%.0f", (k > 0 ? 2e6 / k : 0) }')
        if [ "$arm" != sqlite ]; then
            times=$(printf '%.2f' "$(median <<<"${ratio_sqlite[$key]}")")
            db=$(printf '%.1f' "$(median <<<"${db_cpu[$key]}")")
            share=$(awk -v k="$k" -v d="$db" 'BEGIN { printf "%.0f %%", (k + d > 0 ? 100 * d / (k + d) : 0) }')
            nodes=$(awk -v k="$k" -v d="$db" 'BEGIN { printf "%.1f", (d > 0 ? k / d : 0) }')
        fi
        echo "| $label | $arm | $(printf '%.0f' "$(median <<<"${rps[$key]}")") ($(range <<<"${rps[$key]}")) | $times |" \
            "$(printf '%.2f / %.1f' "$(median <<<"${p50[$key]}")" "$(median <<<"${p99[$key]}")") | $k | $db | $share | $ceiling | $nodes | ${non2xx[$key]} |"
    done
done
