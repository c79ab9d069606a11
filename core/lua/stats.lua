-- stats.lua: counts for one queue, O(log n).
-- KEYS: the queue's keys (lib.lua)
-- ARGV: none
-- Reply: { now_ms, total, scheduled, ready, leased, dead, next_due_ms (-1 none),
--          oldest_ready_due_ms (-1 none), paused (0/1), lapsed }
--   lapsed: the leased ones whose deadline is at or before now (what the next fetch reclaims).
check_layout(false)
local now = clock()
local total = redis.call('HLEN', MSG)
local waiting_and_leased = redis.call('ZCARD', SCHED)
local leased = redis.call('ZCOUNT', SCHED, LEASED, '+inf')
local lapsed = redis.call('ZCOUNT', SCHED, LEASED, fmt_int(LEASED + now))
local ready = redis.call('ZCOUNT', SCHED, '-inf', now)
local next_due = -1
local r = redis.call('ZRANGEBYSCORE', SCHED, '(' .. now, '(' .. LEASED, 'WITHSCORES', 'LIMIT', 0, 1)
if r[2] then next_due = tonumber(r[2]) end
local oldest = -1
if ready > 0 then oldest = first_waiting() end
local paused = 0
if redis.call('HGET', META, 'paused') == '1' then paused = 1 end
return { now, total, waiting_and_leased - leased - ready, ready, leased, redis.call('ZCARD', DIED), next_due,
         oldest, paused, lapsed }
