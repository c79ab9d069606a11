-- fetch.lua: reclaim expired leases, then lease up to `max` due messages, soonest first.
-- KEYS: the queue's keys (lib.lua), then KEYS[9] this fetch's replay key, then replay keys of
--   earlier fetches whose replies arrived (deleted here).
-- ARGV[1] max to lease (0 = only reclaim), ARGV[2] lease ttr ms (0 = each message's own ttr),
--   ARGV[3] fetch id (6 bytes; a token is the fetch id and a 2-byte index), ARGV[4] reply byte
--   budget (leasing stops once the leased records and blobs pass it; always at least one),
--   ARGV[5] reclaim limit
-- Reply: { now_ms, now_us_remainder, next_due_ms (-1 none), next_lease_deadline_ms (-1 none),
--          more (1 when more is leasable now), corrupt_ids, expired_count, replayed_deadlines,
--          then per leased message: id, record (with its token), and the blob when the record
--          is not flagged INLINE }; each lease runs until now + (ARGV[2] or the record's ttr),
--          except on a replay: then replayed_deadlines holds each message's lease deadline (ms),
--          in reply order (it is empty otherwise)
-- A fetch whose reply was lost is retried with the same fetch id: its replay key then hands
-- back the leases it made that are still held, instead of leasing more.
-- An expired lease is a failed attempt: due again at its lease deadline, or dead when it has no
-- attempts left. A message past its expiry time is never leased: it becomes a dead letter with
-- the reason "expired", or is deleted when published with drop-on-expiry.
local now, now_us = clock()
check_layout(false)
local REPLAY = KEYS[9]
if #KEYS > 9 then redis.call('UNLINK', unpack(KEYS, 10)) end
local max, ttr_over, fid = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local budget, reclaim = tonumber(ARGV[4]), tonumber(ARGV[5])
local corrupt = {}
local replayed = {}
local out = { now, now_us, -1, -1, 0, corrupt, 0, replayed }
local more = false

local paused = redis.call('HGET', META, 'paused') == '1'

local counts = { d = 0, r = 0, x = 0, e = 0, ls = 0 }

local function finish()
  hist(counts, now)
  local next_due = first_waiting()
  -- A paused queue leases nothing: report no due time, so consumers sleep (a resume wakes them).
  if paused then next_due = nil end
  if next_due then out[3] = next_due end
  local l = redis.call('ZRANGEBYSCORE', SCHED, LEASED, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if l[2] then out[4] = tonumber(l[2]) - LEASED end
  if more or (next_due and next_due <= now) then out[5] = 1 end
  return out
end

local function add(id, rec, inline)
  out[#out + 1] = id
  out[#out + 1] = rec
  if not inline then out[#out + 1] = redis.call('HGET', BODY, id) or '' end
end

-- 0. a retry of a fetch whose reply was lost: the same leases again, those still running,
-- each with the deadline it got then (a lease that ran out meanwhile is lost, as any lapsed one)
local replay = redis.call('GET', REPLAY)
if replay then
  for id in string.gmatch(replay, '[^\n]+') do
    local rec = redis.call('HGET', MSG, id)
    if rec and #rec >= HDR_LEN and string.sub(rec, 43, 48) == fid then
      local s = tonumber(redis.call('ZSCORE', SCHED, string.sub(rec, 19, 24) .. id) or 0)
      if s > LEASED + now then
        replayed[#replayed + 1] = s - LEASED
        add(id, rec, has(string.byte(rec, 2), F_INLINE))
      end
    end
  end
  more = true
  return finish()
end

-- 1. reclaim expired leases
local expired = redis.call('ZRANGEBYSCORE', SCHED, LEASED, LEASED + now, 'WITHSCORES', 'LIMIT', 0, reclaim)
for i = 1, #expired, 2 do
  local m = expired[i]
  local id = member_id(m)
  local rec = redis.call('HGET', MSG, id)
  local r = decode(rec)
  if not r then
    redis.call('ZREM', SCHED, m)
    if rec then
      redis.call('ZADD', DIED, now, id)
      corrupt[#corrupt + 1] = id
    end
  else
    r.att = r.att + 1
    r.tok = ZERO_TOKEN
    local reason = 'lease expired: not acknowledged within its ttr'
    if r.att >= r.max then
      bury(id, r, rec, reason, now)
      counts.x = counts.x + 1
    else
      counts.r = counts.r + 1
      r.err = reason
      r.due = tonumber(expired[i + 1]) - LEASED
      redis.call('HSET', MSG, id, encode(r, rec))
      redis.call('ZADD', SCHED, r.due, m)
    end
  end
end
if #expired == 2 * reclaim then more = true end

if max == 0 or paused then return finish() end

-- 2. lease due messages in (due time, publish order)
local cand = redis.call('ZRANGEBYSCORE', SCHED, '-inf', now, 'LIMIT', 0, max)
if #cand == 0 then return finish() end
if #cand == max then more = true end
local ids = {}
for i, m in ipairs(cand) do ids[i] = member_id(m) end
local recs = redis.call('HMGET', MSG, unpack(ids))
local msgs, zadd, leased = {}, {}, {}
local bytes, n, maxttr = 0, 0, 0
local LEASE_FMT = '>BBxxxxI4' .. string.rep('x', 14) .. 'I6I6I6c8I4'
-- Lease deadlines as strings, one per distinct ttr: a number argument of redis.call is formatted
-- with printf("%.14g") per call, which costs more than the rest of a message's lease.
local deadline = {}
local no = #out -- entries in out
for i, m in ipairs(cand) do
  local id, rec = ids[i], recs[i]
  local v, fl, ttr, pub, due, exp, tok, blen
  if rec and #rec >= HDR_LEN then v, fl, ttr, pub, due, exp, tok, blen = struct.unpack(LEASE_FMT, rec) end
  if v ~= VERSION or tok ~= ZERO_TOKEN or has(fl, F_DEAD) then
    -- unreadable, or flags that contradict the schedule: out of the way, kept for inspection
    redis.call('ZREM', SCHED, m)
    if rec then
      redis.call('ZADD', DIED, now, id)
      corrupt[#corrupt + 1] = id
    end
  elseif exp > 0 and exp <= now then
    out[7] = out[7] + 1
    counts.e = counts.e + 1
    local r = decode(rec)
    if has(fl, F_DROP) then delete(id, r)
    else bury(id, r, rec, 'expired: not delivered before its expiry time', now) end
  else
    local inline = has(fl, F_INLINE)
    local size = #rec
    if not inline then size = size + blen end
    if n > 0 and bytes + size > budget then
      more = true
      break
    end
    bytes = bytes + size
    n = n + 1
    if ttr_over > 0 then ttr = ttr_over end
    if ttr > maxttr then maxttr = ttr end
    local leased_rec = struct.pack('>c42c6H', rec, fid, n) .. string.sub(rec, 51)
    local k = 2 * n - 2 -- entries before this one in msgs and zadd
    msgs[k + 1], msgs[k + 2] = id, leased_rec
    local d = deadline[ttr]
    if not d then
      d = fmt_int(LEASED + now + ttr)
      deadline[ttr] = d
    end
    zadd[k + 1], zadd[k + 2] = d, m
    leased[n] = id
    out[no + 1], out[no + 2] = id, leased_rec
    no = no + 2
    if not inline then
      no = no + 1
      out[no] = redis.call('HGET', BODY, id) or ''
    end
    -- Late since it was due, or since it was published when it came already due (an `at` in
    -- the past, or a producer's clock ahead of Redis'): the queue's own delay, not the producer's.
    local late = now - math.max(due, pub)
    if late < 1 then
      counts.l0 = (counts.l0 or 0) + 1
    else
      local lb = lateness_bucket(late)
      counts[lb] = (counts[lb] or 0) + 1
      counts.ls = counts.ls + late
    end
  end
end
counts.d = n
if n > 0 then
  redis.call('HSET', MSG, unpack(msgs))
  redis.call('ZADD', SCHED, unpack(zadd))
  redis.call('SET', REPLAY, table.concat(leased, '\n'), 'PX', maxttr)
end
return finish()
