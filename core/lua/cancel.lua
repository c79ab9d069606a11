-- cancel.lua: delete a message wherever it is (scheduled, ready, leased or dead).
-- KEYS: the queue's keys in the standard order of lib.lua (jobs, delayed, ready, leased, tokens,
--   dead, seq, wake)
-- ARGV[1] id
-- Reply: 1 deleted, 0 no such id. A consumer holding its lease gets "lease lost" on settling.
local id = ARGV[1]
local rec = redis.call('HGET', JOBS, id)
if not rec then return 0 end
local r = decode(rec)
local removed = 0
if r then removed = redis.call('ZREM', DELAYED, member(r.seq, id)) end
if removed == 0 then
  if redis.call('ZREM', LEASED, id) == 1 then
    redis.call('HDEL', TOKENS, id)
  elseif redis.call('ZREM', DEAD, id) == 0 then
    -- O(position in the ready list); cancelling a message that is already due is rare
    redis.call('LREM', READY, 1, id)
  end
end
redis.call('HDEL', JOBS, id)
return 1
