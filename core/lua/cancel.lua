-- cancel.lua: delete a message wherever it is (scheduled, ready, leased or dead). O(log n).
-- KEYS: the queue's keys (lib.lua); on Redis Cluster KEYS[9], the caller's replay hash
-- ARGV: (on Redis Cluster: lib.lua's replay_begin arguments, then) of, id: `of` for a shard of
--   a sharded queue the queue's shard count, which the shard's META must carry as its mark
--   ('0' for a plain queue: lib.lua check_layout)
-- Reply: 1 deleted, 0 no such id; a call sent again after it ran gets its first reply. A
-- consumer holding its lease gets "lease lost" on settling. An error 'redelay: shard not
-- marked' when the shard does not carry the mark `of` (nothing written, the replay key neither).
check_layout(false, ARGV[replay_first()])
local first, ran = replay_begin()
if ran then return tonumber(ran) end
local id = ARGV[first + 1]
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
