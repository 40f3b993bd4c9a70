#!/usr/bin/env bash
# Builds bench/baseline/hello.c (the bare libmicrohttpd server) and runs it in the foreground
# until SIGINT or SIGTERM. bench/http-bench.sh and bench/paired-bench.sh start it beside
# keychaind; by hand:
#   bench/baseline/run.sh 8299 &
#   wrk -t2 -c64 -d10s --latency http://127.0.0.1:8299/hello
#
# usage: bench/baseline/run.sh [PORT]    (default 8299; env MHD_THREADS, worker threads, default 2)
# needs: gcc, pkg-config, libmicrohttpd-dev (scripts/bootstrap --bench installs them)
set -euo pipefail
port="${1:-8299}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pkg-config --exists libmicrohttpd \
    || { echo "baseline: pkg-config finds no libmicrohttpd (install libmicrohttpd-dev)" >&2; exit 1; }

# Built afresh each time into a directory of its own, which is gone before the server is
# measured: the running process keeps its file.
build="$(mktemp -d)"
# shellcheck disable=SC2046  # pkg-config's flags are words
gcc -O2 -Wall -Wextra -Werror -o "$build/hello" "$here/hello.c" $(pkg-config --cflags --libs libmicrohttpd)
"$build/hello" "$port" &
server=$!
rm -rf "$build"

# Whoever stops this script stops the server; its exit status is this script's.
trap 'kill -TERM "$server" 2>/dev/null || true' INT TERM
status=0
wait "$server" || status=$?
if kill -0 "$server" 2>/dev/null; then   # the trap interrupted the first wait
    status=0
    wait "$server" || status=$?
fi
exit "$status"
