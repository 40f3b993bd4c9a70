#!/usr/bin/env bash
# Answer size benchmark (issue 29, item 8): 40 secrets of 0.76 MB read back with `limit=all`
# from a release keychaind on loopback: how many pages, the largest answer body, the bytes in
# all, and the server's peak resident memory (VmHWM) before and after the reads.
#
# usage: bench/answer-bound.sh [secrets, default 40] [bytes each, default 760000]
# needs: curl, python3; builds keychaind in release, unless KEYCHAIND names a binary to measure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
count="${1:-40}"
size="${2:-760000}"
bench_workspace

bench_serve_one

PYTHONPATH=bench python3 - "$port" "$(cat "$work/data/admin.token")" "$count" "$size" "$server" <<'PY'
import http.client, json, sys, time
from keychaind_http import Keychaind
port, admin, count, size, pid = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
call = Keychaind(port).call

def peak_mb():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) / 1024

token = json.loads(call("POST", "/v1/admin/clients", admin, {"name": "bulk", "accessGroups": ["bulk"]}))["token"]
for index in range(count):
    call("POST", "/v1/items/genericPassword", token, {"service": "bulk", "account": f"a{index}", "value": chr(65 + index % 26) * size})
before = peak_mb()
pages, largest, total, cursor = 0, 0, 0, None
while True:
    path = "/v1/items/genericPassword?service=bulk&limit=all&return=attributes,data" + (f"&cursor={cursor}" if cursor else "")
    body = call("GET", path, token)
    pages += 1
    largest = max(largest, len(body))
    total += len(body)
    cursor = json.loads(body).get("next")
    if not cursor:
        break
after = peak_mb()
print(f"## Answer size ({time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}, {count} secrets of {size} bytes, limit=all)")
print()
print("| pages | largest answer | all answers | peak RSS before reads | peak RSS after |")
print("| --- | --- | --- | --- | --- |")
print(f"| {pages} | {largest / 1e6:.2f} MB | {total / 1e6:.2f} MB | {before:.0f} MB | {after:.0f} MB |")
PY
