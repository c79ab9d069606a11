-- list.lua: a page of the messages in one state, in their order (due time, lease deadline or
-- time of death). O(log N + page): ranks, not a scan.
-- KEYS: the queue's keys (lib.lua)
-- ARGV[1] state ('scheduled' | 'ready' | 'leased' | 'dead'), ARGV[2] offset within the state,
-- ARGV[3] limit (at most 1000), ARGV[4] byte budget for blobs kept apart (the page ends early
-- once they pass it; always at least one message)
-- Reply: { now_ms, count in that state, then 4 per message: id, score_ms (due, lease deadline or
-- death), record (false when missing), blob (false when inline or missing) }
check_layout(false)
local now = clock()
local state, off, lim, budget = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local key, first, count, shift = SCHED, 0, 0, 0
local ready = redis.call('ZCOUNT', SCHED, '-inf', now)
local waiting = redis.call('ZCOUNT', SCHED, '-inf', '(' .. fmt_int(LEASED))
if state == 'ready' then count = ready
elseif state == 'scheduled' then first, count = ready, waiting - ready
elseif state == 'leased' then first, count, shift = waiting, redis.call('ZCARD', SCHED) - waiting, LEASED
else key, count = DIED, redis.call('ZCARD', DIED) end
local out = { now, count }
if off >= count then return out end
local last = first + math.min(off + lim, count) - 1
local r = redis.call('ZRANGE', key, first + off, last, 'WITHSCORES')
local bytes = 0
for i = 1, #r, 2 do
  local id = r[i]
  if key == SCHED then id = member_id(id) end
  bytes = page_item(out, id, tonumber(r[i + 1]) - shift, bytes, budget, i == 1)
  if not bytes then break end
end
return out
