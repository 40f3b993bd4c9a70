-- Sends the bearer token from the environment on every request.
local token = os.getenv("KEYCHAIND_BENCH_TOKEN")
wrk.headers["Authorization"] = "Bearer " .. token
