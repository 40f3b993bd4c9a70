#!/usr/bin/env bash
# Tenant isolation benchmark (issue 29, item 5): how much an exact read of group A's one item
# slows down when group B holds 3,000 items under the same service and account (different
# tokenID). A release keychaind on loopback, two clients (one per group); each measured read
# follows a write to a third group, so that it misses the find cache as a read on a busy server
# does, and only the read is timed (Python's http.client on one kept-alive connection; its own
# cost is the same in both columns). Prints the median and p90 read time with B empty and with B
# full, and their ratio.
#
# usage: bench/tenant-isolation.sh [reads, default 2000] [items in B, default 3000]
# needs: curl, python3; builds keychaind in release, unless KEYCHAIND names a binary to measure
# (another build, to compare).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
reads="${1:-2000}"
crowd="${2:-3000}"
bench_workspace

bench_serve_one

PYTHONPATH=bench python3 - "$port" "$(cat "$work/data/admin.token")" "$reads" "$crowd" <<'PY'
import http.client, json, statistics, sys, time
from keychaind_http import Keychaind
port, admin, reads, crowd = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
call = Keychaind(port).call

def client(name, group):
    return json.loads(call("POST", "/v1/admin/clients", admin, {"name": name, "accessGroups": [group]}))["token"]

a, b, c = client("tenant-a", "A"), client("tenant-b", "B"), client("writer", "C")
call("POST", "/v1/items/genericPassword", a, {"service": "s", "account": "a", "value": "secret of A"})

def measure():
    times = []
    for index in range(reads):
        call("PATCH", "/v1/items/genericPassword?service=w&account=w", c, {"value": str(index)})
        started = time.perf_counter()
        call("GET", "/v1/items/genericPassword?service=s&account=a&return=data", a)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.9)]

call("POST", "/v1/items/genericPassword", c, {"service": "w", "account": "w", "value": "0"})
empty = measure()
for index in range(crowd):
    call("POST", "/v1/items/genericPassword", b, {"service": "s", "account": "a", "tokenID": f"t{index}", "value": "x" * 32})
full = measure()
print(f"## Tenant isolation ({time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}, {reads} reads each, each after a write)")
print()
print("| group B holds | p50 ms | p90 ms |")
print("| --- | --- | --- |")
print(f"| nothing | {empty[0]:.3f} | {empty[1]:.3f} |")
print(f"| {crowd} items, same service and account | {full[0]:.3f} | {full[1]:.3f} |")
print()
print(f"slowdown of group A's read (p50 full / empty): {full[0] / empty[0]:.2f}x")
PY
