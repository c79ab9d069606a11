-- dead_list.lua: list dead letters, oldest death first.
-- KEYS: the queue's keys (lib.lua)
-- ARGV[1] offset, ARGV[2] limit (bounded by the caller, at most 1000), ARGV[3] byte budget for
-- blobs (the page ends early once the blobs pass it; always at least one message)
-- Reply: { now_ms, then 4 per message: id, died_at_ms, record (false when missing), blob (false
-- when inline or missing) }
check_layout(false)
local now = clock()
local out = { now }
local off, lim, budget = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local r = redis.call('ZRANGE', DIED, off, off + lim - 1, 'WITHSCORES')
local bytes = 0
for i = 1, #r, 2 do
  bytes = page_item(out, r[i], tonumber(r[i + 1]), bytes, budget, i == 1)
  if not bytes then break end
end
return out
