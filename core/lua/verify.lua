-- verify.lua: check the queue's invariant (docs/architecture.md): every id in jobs is in exactly
-- one of delayed, ready, leased, dead; nothing is in those without a record; every lease has a
-- token and every token a lease; every delayed member carries its record's seq.
-- KEYS: the queue's keys in the standard order of lib.lua (jobs, delayed, ready, leased, tokens,
--   dead, seq, wake)
-- ARGV[1] the largest queue (records) to check; beyond it the script refuses (it is O(n): a
-- diagnostic for tests and maintenance, not for a hot path)
-- Reply: { checked_records, problems (array of at most 50 strings) }, or an error when too large
local total = redis.call('HLEN', JOBS)
if total > tonumber(ARGV[1]) then
  return redis.error_reply('verify: queue holds ' .. total .. ' records, more than the limit ' .. ARGV[1])
end
local problems = {}
local function problem(s) if #problems < 50 then problems[#problems + 1] = s end end
local place = {}
local function seen(id, where)
  if place[id] then problem('id ' .. id .. ' is in both ' .. place[id] .. ' and ' .. where)
  else place[id] = where end
end
local delayed = redis.call('ZRANGE', DELAYED, 0, -1)
for _, m in ipairs(delayed) do
  local id = member_id(m)
  seen(id, 'delayed')
  local r = decode(redis.call('HGET', JOBS, id))
  if r and member(r.seq, id) ~= m then problem('id ' .. id .. ' is in delayed under a stale seq') end
end
for _, id in ipairs(redis.call('LRANGE', READY, 0, -1)) do seen(id, 'ready') end
for _, id in ipairs(redis.call('ZRANGE', LEASED, 0, -1)) do
  seen(id, 'leased')
  if redis.call('HEXISTS', TOKENS, id) == 0 then problem('leased id ' .. id .. ' has no token') end
end
for _, id in ipairs(redis.call('ZRANGE', DEAD, 0, -1)) do seen(id, 'dead') end
for _, id in ipairs(redis.call('HKEYS', TOKENS)) do
  if place[id] ~= 'leased' then problem('token for id ' .. id .. ' which is not leased') end
end
local n = 0
for _, id in ipairs(redis.call('HKEYS', JOBS)) do
  n = n + 1
  if not place[id] then problem('id ' .. id .. ' has a record but is in no set') end
  place[id] = nil
end
for id, where in pairs(place) do problem('id ' .. id .. ' is in ' .. where .. ' without a record') end
return { n, problems }
