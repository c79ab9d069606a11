-- stats.lua: counts for one queue, O(log n).
-- KEYS: the queue's keys in the standard order of lib.lua (jobs, delayed, ready, leased, tokens,
--   dead, seq, wake)
-- ARGV: none
-- Reply: { now_ms, total, scheduled, ready, leased, dead, next_due_ms (-1 none),
--          oldest_ready_due_ms (-1 none) }
-- 'ready' counts messages already due: those promoted to the ready list and those due in
-- 'delayed' that the next fetch promotes.
local now = clock()
local total = redis.call('HLEN', JOBS)
local delayed = redis.call('ZCARD', DELAYED)
local due = redis.call('ZCOUNT', DELAYED, '-inf', now)
local ready = redis.call('LLEN', READY) + due
local next_due = -1
local r = redis.call('ZRANGEBYSCORE', DELAYED, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
if r[2] then next_due = tonumber(r[2]) end
local oldest = -1
if due > 0 then oldest = first_score(DELAYED) end
return { now, total, delayed - due, ready, redis.call('ZCARD', LEASED), redis.call('ZCARD', DEAD), next_due, oldest }
