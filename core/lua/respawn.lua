-- respawn.lua: bring dead letters back: attempts reset to 0, due now.
-- KEYS: the queue's keys in the standard order of lib.lua (jobs, delayed, ready, leased, tokens,
--   dead, seq, wake)
-- ARGV[1] mode: 'ids' (then ARGV[2..] are ids) or 'oldest' (ARGV[2] = how many, oldest first)
-- Reply: number of messages respawned (ids that are not dead are skipped; an unreadable record
-- stays dead)
local now = clock()
local ids
if ARGV[1] == 'ids' then
  ids = {}
  for i = 2, #ARGV do ids[#ids + 1] = ARGV[i] end
else
  ids = redis.call('ZRANGE', DEAD, 0, tonumber(ARGV[2]) - 1)
end
local before = first_score(DELAYED)
local n = 0
for _, id in ipairs(ids) do
  if redis.call('ZSCORE', DEAD, id) then
    local rec = redis.call('HGET', JOBS, id)
    local r = decode(rec)
    if r then
      redis.call('ZREM', DEAD, id)
      r.att = 0
      r.due = now
      redis.call('HSET', JOBS, id, encode(r, rec))
      redis.call('ZADD', DELAYED, now, member(r.seq, id))
      n = n + 1
    elseif not rec then
      redis.call('ZREM', DEAD, id)
    end
  end
end
if n > 0 then wake_if_earlier(before, now) end
return n
