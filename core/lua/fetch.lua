-- fetch.lua: reclaim expired leases, promote due messages, lease up to `max` ready ones.
-- KEYS: the queue's keys in the standard order of lib.lua (jobs, delayed, ready, leased, tokens,
--   dead, seq, wake)
-- ARGV[1] max to lease (0 = only reclaim and promote), ARGV[2] lease ttr ms (0 = each
-- message's own ttr), ARGV[3] promote limit, ARGV[4] reclaim limit
-- Reply: { now_ms, now_us_remainder, next_due_ms (-1 none), next_lease_deadline_ms (-1 none),
--          more (1 when leasable messages remain), corrupt_ids (array),
--          then 4 per leased message: id, token, lease_deadline_ms, record }
-- An expired lease counts as a failed attempt: the message goes back to `delayed` due now, or to
-- `dead` when it has no attempts left. Work per call is bounded by the three limits.
local now, now_us = clock()
local max, ttr_override = tonumber(ARGV[1]), tonumber(ARGV[2])
local corrupt = {}

-- 1. reclaim expired leases
local expired = redis.call('ZRANGEBYSCORE', LEASED, '-inf', now, 'LIMIT', 0, tonumber(ARGV[4]))
for _, id in ipairs(expired) do
  redis.call('ZREM', LEASED, id)
  redis.call('HDEL', TOKENS, id)
  local rec = redis.call('HGET', JOBS, id)
  local r = decode(rec)
  if r then
    r.att = r.att + 1
    r.err = 'lease expired: not acknowledged within its ttr'
    if r.att >= r.max then
      bury(id, r, rec, r.err, now)
    else
      r.due = now
      redis.call('HSET', JOBS, id, encode(r, rec))
      redis.call('ZADD', DELAYED, now, member(r.seq, id))
    end
  elseif rec then
    bury_corrupt(id, now)
    corrupt[#corrupt + 1] = id
  end
end

-- 2. promote due messages, oldest (due, seq) first
local promoted = {}
local due = redis.call('ZRANGEBYSCORE', DELAYED, '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
if #due > 0 then
  for i, m in ipairs(due) do promoted[i] = member_id(m) end
  redis.call('ZREMRANGEBYRANK', DELAYED, 0, #due - 1)
end

-- 3. lease: from the ready list first; when it is empty, straight from what was just promoted
-- (saving a push and a pop); the rest of the promoted ids go to the ready list, in order.
local out = { now, now_us, -1, -1, 0, corrupt }
local popped = {}
if max > 0 and redis.call('LLEN', READY) > 0 then
  popped = redis.call('LPOP', READY, max) or {}
end
local take = 0
if max > #popped and #promoted > 0 and #popped == 0 then
  take = math.min(max, #promoted)
  for i = 1, take do popped[i] = promoted[i] end
end
if #promoted > take then
  redis.call('RPUSH', READY, unpack(promoted, take + 1))
end
if #popped > 0 then
  local token0 = redis.call('INCRBY', SEQ, #popped) - #popped
  local lease_args, token_args = {}, {}
  local recs = redis.call('HMGET', JOBS, unpack(popped))
  for i, id in ipairs(popped) do
    local rec = recs[i]
    local ttr = ttr_of(rec)
    if ttr then
      if ttr_override > 0 then ttr = ttr_override end
      local token = fmt_int(token0 + i)
      lease_args[#lease_args + 1] = now + ttr
      lease_args[#lease_args + 1] = id
      token_args[#token_args + 1] = id
      token_args[#token_args + 1] = token
      out[#out + 1] = id
      out[#out + 1] = token
      out[#out + 1] = now + ttr
      out[#out + 1] = rec
    elseif rec then
      bury_corrupt(id, now)
      corrupt[#corrupt + 1] = id
    end
  end
  if #lease_args > 0 then
    redis.call('ZADD', LEASED, unpack(lease_args))
    redis.call('HSET', TOKENS, unpack(token_args))
  end
end

local next_due = first_score(DELAYED)
local next_lease = first_score(LEASED)
if next_due then out[3] = next_due end
if next_lease then out[4] = next_lease end
if redis.call('LLEN', READY) > 0 or (next_due and next_due <= now) then out[5] = 1 end
return out
