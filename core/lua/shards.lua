-- shards.lua: records or checks the shard count of a sharded queue, in the META of its plain
-- tag {queue} (the shards' data lives under {queue/0} .. {queue/N-1}). Once `shards` is set,
-- every other script refuses that tag (lib.lua check_layout), so a client that opens the queue
-- unsharded fails loudly instead of seeing an empty queue.
-- KEYS: the plain queue's keys (lib.lua)
-- ARGV[1] the shard count this client uses (2 or more)
-- ARGV[2] '1': store the count when none is stored (a write); '0': only read it (a read leaves
--         no trace of a queue that does not exist)
-- Reply: { count, stored }: count is the stored count (the given one when this call stored
-- it), 0 when none is stored and ARGV[2] is '0', or -1 when the plain queue holds messages (it
-- must be drained before it can become sharded); stored is 1 when this call stored the count
-- (the client then marks every shard with it: `of` in each shard's META, lib.lua), else 0
local m = redis.call('HGET', META, 'shards')
if m then return { tonumber(m), 0 } end
if redis.call('EXISTS', MSG, SCHED, DIED, BODY) > 0 or redis.call('TYPE', LEGACY).ok == 'hash' then
  return { -1, 0 }
end
if ARGV[2] == '0' then return { 0, 0 } end
redis.call('HSET', META, 'shards', ARGV[1])
return { tonumber(ARGV[1]), 1 }
