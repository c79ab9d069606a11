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
  local id = r[i]
  local rec = redis.call('HGET', MSG, id)
  local d = decode(rec)
  local blob = false
  if d and not has(d.flags, F_INLINE) then blob = redis.call('HGET', BODY, id) or false end
  local size = (rec and #rec or 0) + (blob and #blob or 0)
  if i > 1 and bytes + size > budget then break end
  bytes = bytes + size
  out[#out + 1] = id
  out[#out + 1] = tonumber(r[i + 1])
  out[#out + 1] = rec or false
  out[#out + 1] = blob
end
return out
