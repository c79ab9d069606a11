-- cancel.lua: delete a message wherever it is (scheduled, ready, leased or dead). O(log n).
-- KEYS: the queue's keys (lib.lua); on Redis Cluster KEYS[9], the caller's replay hash
-- ARGV: (on Redis Cluster: lib.lua's replay_begin arguments, then) id
-- Reply: 1 deleted, 0 no such id; a call sent again after it ran gets its first reply. A
-- consumer holding its lease gets "lease lost" on settling.
check_layout(false)
local first, ran = replay_begin()
if ran then return tonumber(ran) end
local id = ARGV[first]
local rec = redis.call('HGET', MSG, id)
if not rec then
  replay_keep('0')
  return 0
end
local r = decode(rec)
if not r then
  redis.call('ZREM', DIED, id)
  redis.call('HDEL', BODY, id)
end
delete(id, r)
replay_keep('1')
return 1
