#!/usr/bin/env bash
# Storage benchmark: AES-256-GCM seal+open next to `openssl speed`, point reads at 1,000 and
# 1,000,000 items, durable adds, reader pool vs single connection. Usage: bench/storage-bench.sh [counts...]
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== machine"; uname -srm; nproc; grep -m1 'model name' /proc/cpuinfo || true; free -g | head -2
echo "== openssl speed -evp aes-256-gcm -bytes 64 -seconds 3"
openssl speed -evp aes-256-gcm -bytes 64 -seconds 3 2>/dev/null | tail -2
echo "== StorageBench"
swift build -c release --product StorageBench >/dev/null
.build/release/StorageBench "$@"
