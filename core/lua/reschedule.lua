-- reschedule.lua: give a waiting (scheduled or ready) message a new due time.
-- KEYS: the queue's keys in the standard order of lib.lua (jobs, delayed, ready, leased, tokens,
--   dead, seq, wake)
-- ARGV[1] id, ARGV[2] mode ('d' delay from now | 'a' absolute), ARGV[3] value ms
-- Reply: { status, due_ms }: status 1 rescheduled, 0 no such id, -1 leased (being processed:
-- refused), -2 dead (use respawn), -3 unreadable record
local id = ARGV[1]
local now = clock()
local rec = redis.call('HGET', JOBS, id)
if not rec then return { 0, -1 } end
local r = decode(rec)
if not r then return { -3, -1 } end
if redis.call('ZREM', DELAYED, member(r.seq, id)) == 0 then
  if redis.call('ZSCORE', LEASED, id) then return { -1, -1 } end
  if redis.call('ZSCORE', DEAD, id) then return { -2, -1 } end
  redis.call('LREM', READY, 1, id)
end
local before = first_score(DELAYED)
local due = tonumber(ARGV[3])
if ARGV[2] == 'd' then due = now + due end
r.due = due
redis.call('HSET', JOBS, id, encode(r, rec))
redis.call('ZADD', DELAYED, due, member(r.seq, id))
wake_if_earlier(before, due)
return { 1, due }
