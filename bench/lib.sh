# Helpers shared by the bench/ scripts (sourced, not run).

# wrk prints latencies as 812.00us / 1.20ms / 2.00s; this prints milliseconds.
to_ms() {
    awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n = n; else if (v ~ /s$/) n *= 1000; printf "%.3f", n }'
}
# a / b to two decimals (0 when b is 0).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
# The median and the range ("low–high") of the space-separated numbers on stdin.
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
range() { tr ' ' '\n' | grep -v '^$' | sort -g | awk 'NR == 1 { low = $1 } { high = $1 } END { print low "–" high }'; }

# A temporary directory ($work) and a list for the servers a script starts ($pids): on exit the
# servers are stopped and the directory removed.
bench_workspace() {
    work="$(mktemp -d)"
    pids=()
    trap bench_cleanup EXIT
}
bench_cleanup() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}

# The release keychaind to measure: $KEYCHAIND when set, else this tree's release build, built
# here (into $KEYCHAIND_SCRATCH when set, e.g. .build-pgbench-release, else .build). Exports KEYCHAIND.
bench_build_keychaind() {
    if [ -z "${KEYCHAIND:-}" ]; then
        local scratch="${KEYCHAIND_SCRATCH:-.build}"
        swift build -c release --product keychaind --scratch-path "$scratch" >/dev/null
        KEYCHAIND="$scratch/release/keychaind"
    fi
    export KEYCHAIND
}

# One release keychaind (bench_build_keychaind) on a free loopback port, its data in $work/data
# (after bench_workspace), or with NAME in $work/NAME (log $work/NAME.log) and with the
# VAR=VALUE settings given after it in its environment. Sets $port and $server (its PID, stopped
# on exit) once it answers /v1/health.
bench_serve_one() {
    local name="${1:-}" data="$work/data" log="$work/server.log"
    [ $# -gt 0 ] && shift
    [ -n "$name" ] && data="$work/$name" log="$work/$name.log"
    bench_build_keychaind
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    env KEYCHAIND_LOG_LEVEL=warning "$@" "$KEYCHAIND" serve --listen "127.0.0.1:$port" --data-dir "$data" \
        >"$log" 2>&1 &
    server=$!
    pids+=("$server")
    until curl -sf "http://127.0.0.1:$port/v1/health" >/dev/null 2>&1; do
        kill -0 "$server" 2>/dev/null || { cat "$log" >&2; exit 1; }
        sleep 0.01
    done
}
