-- dead_list.lua: list dead letters, oldest death first.
-- KEYS: the queue's keys in the standard order of lib.lua (jobs, delayed, ready, leased, tokens,
--   dead, seq, wake)
-- ARGV[1] offset, ARGV[2] limit (bounded by the caller, at most 1000)
-- Reply: { now_ms, then 3 per message: id, died_at_ms, record (false when missing) }
local now = clock()
local out = { now }
local off, lim = tonumber(ARGV[1]), tonumber(ARGV[2])
local r = redis.call('ZRANGE', DEAD, off, off + lim - 1, 'WITHSCORES')
for i = 1, #r, 2 do
  out[#out + 1] = r[i]
  out[#out + 1] = tonumber(r[i + 1])
  out[#out + 1] = redis.call('HGET', JOBS, r[i])
end
return out
