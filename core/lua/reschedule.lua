-- reschedule.lua: give a waiting (scheduled or ready) message a new due time. O(log n).
-- KEYS: the queue's keys (lib.lua)
-- ARGV[1] id, ARGV[2] mode ('d' delay from now | 'a' absolute), ARGV[3] value ms, ARGV[4] for a
--   shard of a sharded queue the queue's shard count, which the shard's META must carry as its
--   mark `of` ('0' for a plain queue: lib.lua check_layout)
-- Reply: { status, due_ms }: status 1 rescheduled, 0 no such id, -1 leased (being processed:
-- refused), -2 dead (use respawn), -3 unreadable record, -4 the new due time is at or after the
-- message's expiry time; an error 'redelay: shard not marked' when the shard does not carry
-- the mark ARGV[4] (nothing written)
local now = clock()
check_layout(false, ARGV[4])
local id = ARGV[1]
local rec = redis.call('HGET', MSG, id)
if not rec then return { 0, -1 } end
local r = decode(rec)
if not r then return { -3, -1 } end
if is_leased(r) then return { -1, -1 } end
if has(r.flags, F_DEAD) then return { -2, -1 } end
local due = tonumber(ARGV[3])
if ARGV[2] == 'd' then due = now + due end
if r.exp > 0 and due >= r.exp then return { -4, r.exp } end
local before = first_waiting()
r.due = due
redis.call('HSET', MSG, id, encode(r, rec))
redis.call('ZADD', SCHED, due, member(r.seq, id))
wake_if_earlier(before, due)
return { 1, due }
