-- Sends OpenBao's token on every request (KV v2 read).
local token = os.getenv("BAO_BENCH_TOKEN")
wrk.headers["X-Vault-Token"] = token
