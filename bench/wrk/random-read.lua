-- GET one of N populated generic passwords at random (service-i / account-i, return=data),
-- so reads spread over the whole vault rather than one cached page.
local token = os.getenv("KEYCHAIND_BENCH_TOKEN")
local items = tonumber(os.getenv("KEYCHAIND_BENCH_ITEMS") or "1000")
math.randomseed(os.time())

function request()
    local i = math.random(0, items - 1)
    return wrk.format("GET", string.format(
        "/v1/items/genericPassword?service=service-%d&account=account-%d&return=data", i, i),
        { ["Authorization"] = "Bearer " .. token })
end
