-- POST /v1/secret/data/<unique path> on OpenBao's KV v2: a new key per request, the same shape
-- of work as keychaind's durable add (bench/wrk/add.lua).
local token = os.getenv("BAO_BENCH_TOKEN")
local run = os.getenv("KEYCHAIND_BENCH_RUN") or "0"
local counter = 0
local threads = {}

function setup(thread)
    thread:set("thread_id", #threads)
    table.insert(threads, thread)
end

function request()
    counter = counter + 1
    local path = string.format("/v1/secret/data/bench-%s-%d-%d", run, thread_id or 0, counter)
    local body = string.format('{"data":{"account":"a","value":"secret-%d"}}', counter)
    return wrk.format("POST", path, { ["X-Vault-Token"] = token, ["Content-Type"] = "application/json" }, body)
end
