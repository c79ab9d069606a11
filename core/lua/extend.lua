-- extend.lua: push out the lease deadline of a batch of leased messages.
-- KEYS: the queue's keys in the standard order of lib.lua (jobs, delayed, ready, leased, tokens,
--   dead, seq, wake)
-- ARGV: groups of 3: id, lease token, ttr ms (new deadline = now + ttr)
-- Reply: { now_ms, then one integer per group: 1 extended, 0 lease lost (unchanged) }
local now = clock()
local out = { now }
for i = 1, #ARGV, 3 do
  local id = ARGV[i]
  if redis.call('HGET', TOKENS, id) == ARGV[i + 1] then
    redis.call('ZADD', LEASED, 'XX', now + tonumber(ARGV[i + 2]), id)
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
