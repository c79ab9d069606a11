-- respawn.lua: bring dead letters back: attempts reset to 0, due now, after every waiting
-- message due now (a fresh seq).
-- KEYS: the queue's keys (lib.lua)
-- ARGV: the selection of lib.lua's dead_selection
-- Reply: { respawned, skipped, exhausted (0/1), t0, s0 }: skipped counts entries of the range
-- left where they are (unreadable records, or outside the snapshot); ids that are not dead are
-- ignored.
local now = clock()
check_layout(false)
local ids, snap = dead_selection(now)
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
    r.flags = bit.band(r.flags, bit.bnot(F_DEAD))
    redis.call('HSET', MSG, id, encode(r, rec))
    redis.call('ZADD', SCHED, now, member(r.seq, id))
    n = n + 1
  end
end
if n > 0 then wake_if_earlier(before, now) end
if not snap then return { n, skipped, 1, -1, -1 } end
return { n, skipped, snap.exhausted and 1 or 0, snap.t0, snap.s0 }
