-- extend.lua: push out the lease deadline of a batch of leased messages.
-- KEYS: the queue's keys (lib.lua)
-- ARGV: groups of 3: id, lease token, ttr ms (new deadline = now + ttr)
-- Reply: { now_ms, then one integer per group: 1 extended, 0 lease lost (the token is not the
--   current lease, or that lease ran out: unchanged; a lapsed lease is not revived) }
local now = clock()
check_layout(false)
local out = { now }
local lapsed = lease_lapsed(now)
local ids = {}
for i = 1, #ARGV, 3 do ids[#ids + 1] = ARGV[i] end
local recs = redis.call('HMGET', MSG, unpack(ids))
for k, id in ipairs(ids) do
  local i = 3 * k - 2
  local rec = recs[k]
  -- a record that is not leased stores the zero token: that token never extends anything
  local tok = ARGV[i + 1]
  local m = rec and #rec >= HDR_LEN and tok ~= ZERO_TOKEN and string.sub(rec, 43, 50) == tok and string.sub(rec, 19, 24) .. id
  if m and not lapsed(m) then
    redis.call('ZADD', SCHED, 'XX', LEASED + now + tonumber(ARGV[i + 2]), m)
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
