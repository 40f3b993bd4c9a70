-- POST /v1/items/genericPassword with a new service per request (a durable add each time).
local token = os.getenv("KEYCHAIND_BENCH_TOKEN")
local run = os.getenv("KEYCHAIND_BENCH_RUN") or "0"
local counter = 0
local threads = {}
-- `thread_id` is a global of each thread's Lua state, set by setup() below.

function setup(thread)
    thread:set("thread_id", #threads)
    table.insert(threads, thread)
end

function request()
    counter = counter + 1
    local body = string.format('{"service":"bench-%s-%d-%d","account":"a","value":"secret-%d"}',
        run, thread_id or 0, counter, counter)
    return wrk.format("POST", "/v1/items/genericPassword",
        { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" }, body)
end
