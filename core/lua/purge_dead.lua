-- purge_dead.lua: delete dead letters for good (unreadable ones too).
-- KEYS: the queue's keys (lib.lua); on Redis Cluster KEYS[9], the caller's replay hash
-- ARGV: (on Redis Cluster: lib.lua's replay_begin arguments, then) of, then the selection of
--   lib.lua's dead_selection: `of` for a shard of a sharded queue the queue's shard count,
--   which the shard's META must carry as its mark ('0' for a plain queue: lib.lua check_layout)
-- Reply: { purged, skipped, exhausted (0/1), t0, s0 }: skipped counts entries of the range left
-- where they are (outside the snapshot); ids that are not dead are ignored; a call sent again
-- after it ran gets its first reply. An error 'redelay: shard not marked' when the shard does
-- not carry the mark `of` (nothing written, the replay key neither).
local now = clock()
check_layout(false, ARGV[replay_first()])
local first, ran = replay_begin()
if ran then return replayed_numbers(ran) end
local ids, snap = dead_selection(now, first)
local n, skipped = 0, 0
for _, id in ipairs(ids) do
  local rec = redis.call('HGET', MSG, id)
  local r = decode(rec)
  if not rec then
    redis.call('ZREM', DIED, id)
  elseif (r and not has(r.flags, F_DEAD)) or (not r and not redis.call('ZSCORE', DIED, id)) then
    skipped = skipped + 1
  elseif r and snap and r.seq > snap.s0 then
    skipped = skipped + 1
  else
    if r then delete(id, r)
    else
      redis.call('ZREM', DIED, id)
      redis.call('HDEL', BODY, id)
      redis.call('HDEL', MSG, id)
    end
    n = n + 1
  end
end
if not snap then return replay_keep_numbers({ n, skipped, 1, -1, -1 }) end
return replay_keep_numbers({ n, skipped, snap.exhausted and 1 or 0, snap.t0, snap.s0 })
