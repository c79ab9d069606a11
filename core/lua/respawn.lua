-- respawn.lua: bring dead letters back: attempts reset to 0, due now, after every waiting
-- message due now (a fresh seq); the expiry kept, cleared, or set afresh from now.
-- KEYS: the queue's keys (lib.lua); on Redis Cluster KEYS[9], the caller's replay hash
-- ARGV (on Redis Cluster after lib.lua's replay_begin arguments):
--   [1] for a shard of a sharded queue the queue's shard count, which the shard's META must
--   carry as its mark `of` ('0' for a plain queue: lib.lua check_layout)
--   [2] the expiry: -1 keep each message's own, 0 none (never expires), N > 0 expire N ms
--   after the respawn (Redis clock)
--   [3..] the selection of lib.lua's dead_selection
-- Reply: { respawned, skipped, exhausted (0/1), t0, s0 }: skipped counts entries of the range
-- left where they are (unreadable records, or outside the snapshot); ids that are not dead are
-- ignored; a call sent again after it ran gets its first reply. An error 'redelay: shard not
-- marked' when the shard does not carry the mark [1] (nothing written, the replay key neither).
local now = clock()
check_layout(false, ARGV[replay_first()])
local first, ran = replay_begin()
if ran then return replayed_numbers(ran) end
local expiry = tonumber(ARGV[first + 1])
local ids, snap = dead_selection(now, first + 1)
local before = first_waiting()
local n, skipped = 0, 0
for _, id in ipairs(ids) do
  local rec = redis.call('HGET', MSG, id)
  local r = decode(rec)
  if not rec then
    redis.call('ZREM', DIED, id)
  elseif not r or not has(r.flags, F_DEAD) or (snap and r.seq > snap.s0) then
    skipped = skipped + 1
  else
    redis.call('ZREM', DIED, id)
    r.seq = redis.call('HINCRBY', META, 'seq', 1)
    r.att = 0
    r.due = now
    if expiry == 0 then r.exp = 0 elseif expiry > 0 then r.exp = now + expiry end
    r.flags = bit.band(r.flags, bit.bnot(F_DEAD))
    redis.call('HSET', MSG, id, encode(r, rec))
    redis.call('ZADD', SCHED, now, member(r.seq, id))
    n = n + 1
  end
end
if n > 0 then wake_if_earlier(before, now) end
if not snap then return replay_keep_numbers({ n, skipped, 1, -1, -1 }) end
return replay_keep_numbers({ n, skipped, snap.exhausted and 1 or 0, snap.t0, snap.s0 })
