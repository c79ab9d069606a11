-- ack.lua: acknowledge a batch of leased messages: each is deleted for good.
-- KEYS: the queue's keys in the standard order of lib.lua (jobs, delayed, ready, leased, tokens,
--   dead, seq, wake)
-- ARGV: pairs of id, lease token
-- Reply: one integer per pair: 1 acknowledged, 0 lease lost (token is not the current lease;
-- nothing changed for that id)
local out = {}
for i = 1, #ARGV, 2 do
  local id = ARGV[i]
  if redis.call('HGET', TOKENS, id) == ARGV[i + 1] then
    redis.call('HDEL', TOKENS, id)
    redis.call('ZREM', LEASED, id)
    redis.call('HDEL', JOBS, id)
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
