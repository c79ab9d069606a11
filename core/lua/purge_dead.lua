-- purge_dead.lua: delete dead letters for good.
-- KEYS: the queue's keys in the standard order of lib.lua (jobs, delayed, ready, leased, tokens,
--   dead, seq, wake)
-- ARGV[1] mode: 'ids' (then ARGV[2..] are ids) or 'oldest' (ARGV[2] = how many, oldest first)
-- Reply: number of messages deleted (ids that are not dead are skipped)
local ids
if ARGV[1] == 'ids' then
  ids = {}
  for i = 2, #ARGV do ids[#ids + 1] = ARGV[i] end
else
  ids = redis.call('ZRANGE', DEAD, 0, tonumber(ARGV[2]) - 1)
end
local n = 0
for _, id in ipairs(ids) do
  if redis.call('ZREM', DEAD, id) == 1 then
    redis.call('HDEL', JOBS, id)
    n = n + 1
  end
end
return n
