-- verify.lua: check the queue's invariant (docs/architecture.md): every record is in exactly
-- one place that matches its flags — waiting in SCHED at its due time, leased in SCHED above
-- LEASED with a token, or dead in DIED — and nothing is in SCHED, DIED or BODY without one.
-- KEYS: the queue's keys (lib.lua)
-- ARGV[1] the largest queue (records) to check; beyond it the script refuses (it is O(n): a
-- diagnostic for tests and maintenance, not for a hot path)
-- Reply: { checked_records, problems (array of at most 50 strings) }, or an error when too large
check_layout(false)
local total = redis.call('HLEN', MSG)
if total > tonumber(ARGV[1]) then
  return redis.error_reply('verify: queue holds ' .. total .. ' records, more than the limit ' .. ARGV[1])
end
local problems = {}
local function problem(s) if #problems < 50 then problems[#problems + 1] = s end end
local sched = {}
local z = redis.call('ZRANGE', SCHED, 0, -1, 'WITHSCORES')
for i = 1, #z, 2 do
  local id = member_id(z[i])
  if sched[id] then problem('id ' .. id .. ' is in the schedule twice') end
  sched[id] = { m = z[i], score = tonumber(z[i + 1]) }
end
local died = {}
local d = redis.call('ZRANGE', DIED, 0, -1)
for _, id in ipairs(d) do died[id] = true end
local bodies = {}
for _, id in ipairs(redis.call('HKEYS', BODY)) do bodies[id] = true end
local cursor, n, done = '0', 0, {}
repeat
  local page = redis.call('HSCAN', MSG, cursor, 'COUNT', 1000)
  cursor = page[1]
  local kv = page[2]
  for i = 1, #kv, 2 do
    local id, rec = kv[i], kv[i + 1]
    if not done[id] then
      done[id] = true
      n = n + 1
      local r = decode(rec)
      local s = sched[id]
      if not r then
        if not died[id] then problem('id ' .. id .. ' has an unreadable record and is not dead') end
        if s then problem('id ' .. id .. ' has an unreadable record and is scheduled') end
      else
        local leased, dead = is_leased(r), has(r.flags, F_DEAD)
        if leased and dead then problem('dead id ' .. id .. ' holds a lease token') end
        if dead then
          if not died[id] then problem('dead id ' .. id .. ' is not in the dead set') end
          if s then problem('dead id ' .. id .. ' is still scheduled') end
        elseif not s then
          problem('id ' .. id .. ' is ' .. (leased and 'leased' or 'waiting') .. ' but not scheduled')
        else
          if died[id] then problem('id ' .. id .. ' is both scheduled and dead') end
          if s.m ~= member(r.seq, id) then problem('id ' .. id .. ' is scheduled under a stale seq') end
          if leased then
            if s.score < LEASED then problem('leased id ' .. id .. ' has a due time, not a lease deadline') end
                      else
            if s.score >= LEASED then problem('waiting id ' .. id .. ' has a lease deadline') end
            if s.score ~= r.due then problem('waiting id ' .. id .. ' is scheduled at ' .. fmt_int(s.score) .. ', not its due time ' .. fmt_int(r.due)) end
          end
        end
        if has(r.flags, F_INLINE) == (bodies[id] ~= nil) then
          problem('id ' .. id .. (bodies[id] and ' has a stored body and an inline one' or ' has no body'))
        end
      end
      sched[id], died[id], bodies[id] = nil, nil, nil
    end
  end
until cursor == '0'
for id in pairs(sched) do problem('id ' .. id .. ' is scheduled without a record') end
for id in pairs(died) do problem('id ' .. id .. ' is dead without a record') end
for id in pairs(bodies) do problem('id ' .. id .. ' has a stored body without a record') end
return { n, problems }
