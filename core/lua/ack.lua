-- ack.lua: acknowledge a batch of leased messages: each is deleted for good.
-- KEYS: the queue's keys in the standard order of lib.lua (jobs, delayed, ready, leased, tokens,
--   dead, seq, wake)
-- ARGV: pairs of id, lease token
-- Reply: one integer per pair: 1 acknowledged, 0 lease lost (token is not the current lease;
-- nothing changed for that id)
-- Batched: one HMGET for the tokens, then one HDEL / ZREM / HDEL for all that match.
local ids, out, ok, seen = {}, {}, {}, {}
for i = 1, #ARGV, 2 do ids[#ids + 1] = ARGV[i] end
local toks = redis.call('HMGET', TOKENS, unpack(ids))
for i, id in ipairs(ids) do
  if toks[i] == ARGV[2 * i] and not seen[id] then
    seen[id] = true
    ok[#ok + 1] = id
    out[i] = 1
  else
    out[i] = 0
  end
end
if #ok > 0 then
  redis.call('HDEL', TOKENS, unpack(ok))
  redis.call('ZREM', LEASED, unpack(ok))
  redis.call('HDEL', JOBS, unpack(ok))
end
return out
