-- lib.lua: helpers prepended to every other script by scripts.rs (Redis Lua has no `require`).
-- It defines locals only and touches no key. A script carries only the top-level `local`
-- definitions it names, directly or through another one (scripts.rs, lib_for): keep each
-- definition starting with `local ` at the start of a line, its comment right above it.
--
-- Keys of a queue, in the order every script receives them (keys.rs builds it); a script's own
-- extra keys follow them:
--   MSG     hash    id -> record (below)
--   SCHED   zset    seq(6 bytes) .. id -> due time ms while waiting, LEASED + lease deadline ms
--                   while leased: one sorted set holds both, so leasing and settling update a
--                   score in place instead of moving members between structures
--   BODY    hash    id -> blob, only for blobs longer than INLINE_MAX (the rest sit in the record)
--   DIED    zset    id -> time it died, ms (the record stays in MSG, flagged DEAD)
--   META    hash    v = layout ('2'), seq = counter, paused = '1' while paused; for a sharded
--                   queue (its data under the tags {queue/0} .. {queue/N-1}) `shards` = N in
--                   the META of the plain tag {queue}, which makes every script on it refuse,
--                   and `of` = N in the META of each shard {queue/i}: the mark that this shard
--                   belongs to a queue of N shards (check_layout below)
--   LEGACY  string  the key where layout 1 kept its records; a marker, so that a redelay 0.1
--                   client fails with WRONGTYPE instead of seeing an empty queue
--   HIST    hash    history counters: 'm<minute>:<name>' (kept 2 days), 'h<hour>:<name>' (kept
--                   90 days), 't:<name>' (totals since the queue began), hours and totals
--                   without the minute meta `hmin` names (`hist` below); names p published,
--                   d delivered, a acked, r retried, x dead, e expired, l0..l15 lateness buckets
--                   (l0 under 1 ms, lN from 2^(N-1) to 2^N ms, l15 from 16.384 s), ls the sum of
--                   the lateness in ms
--   WAKE    channel due time (ms) of a message that became the earliest waiting one
-- Keys a script gets after these: replay keys of fetch calls (fetch.lua), of publish calls
-- (publish.lua), and of ack, nack, cancel, respawn and purge calls on a Redis Cluster
-- (replay_begin below).
--
-- Record (one MSG field per message), big-endian, 56-byte header read with struct.unpack(HDR):
--   offset 0  version(1)=2 flags(1) attempts(2) max_attempts(2) ttr_ms(4) backoff_base_ms(4)
--             backoff_max_ms(4)
--   offset 18 seq(6) published_at_ms(6) due_at_ms(6) expire_at_ms(6, 0 = never)
--   offset 42 token(8: all zeros unless leased; a leased record is one with a token)
--   offset 50 blob_len(4) error_len(2)
-- then the last error, then the blob (headers + body, opaque to Lua) when flagged INLINE.
-- Flags: INLINE (the blob follows the error), DROP (delete instead of dead-lettering on
-- expiry), DEAD (in DIED). The client writes the first 18 bytes at publish.
-- Scripts rewrite only the header and error: a blob longer than INLINE_MAX is written once, at
-- publish, and read only by the calls that return it.

local MSG, SCHED, BODY, DIED, META, LEGACY, HIST, WAKE =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]

local HDR = '>BBHHI4I4I4I6I6I6I6c8I4H'
local HDR_LEN = 56
local VERSION = 2
local LAYOUT = '2'
local INLINE_MAX = 1024
local LEASED = 4398046511104 -- 2^42: lease scores are LEASED + deadline, above every due time
local ZERO_TOKEN = '\0\0\0\0\0\0\0\0'
-- flags
local F_INLINE, F_DROP, F_DEAD = 1, 2, 8

-- Redis server time in whole milliseconds, and the microseconds past that millisecond.
local function clock()
  local t = redis.call('TIME')
  local us = tonumber(t[2])
  return tonumber(t[1]) * 1000 + math.floor(us / 1000), us % 1000
end

local function fmt_int(n) return string.format('%.0f', n) end
local function has(flags, f) return bit.band(flags, f) ~= 0 end
local function is_leased(r) return r.tok ~= ZERO_TOKEN end

-- History is on unless the queue's meta says `nohist`; the minute whose counters are not yet
-- folded into its hour and the totals (meta `hmin`, below `hist`) and the last hour whose old
-- counters were pruned (meta `hhour`). check_layout reads all three with the layout.
local HISTORY = true
local PRUNED = {}

-- Refuses to work on data of another layout. `create` marks a queue as layout 2 (publish), and
-- then returns true when it did (the queue had no data: new, or destroyed since).
-- `of` (a script that creates data or state: publish, flag; or that changes messages by id:
-- cancel, reschedule, respawn, purge) is the shard count of the caller's handle when the queue
-- is a shard of a sharded queue, nil or '0' for a plain queue: a shard whose META does not
-- carry that count as its mark `of` is refused with 'redelay: shard not marked', before
-- anything is written. (It costs nothing: the HMGET below reads `of` anyway. The settles, ack,
-- nack and extend, do not pass it: their lease tokens come from a fetch of that very shard.) A handle trusts its count for a few seconds; another
-- client may have destroyed the queue and made it again, plain or with another count, meanwhile,
-- and then this shard belongs to no queue (or to another layout of it): what the caller would
-- write here would never be read, and a message it names by id is in another shard if anywhere. The client then checks the count and marks the shards again
-- (ops/sharded.rs), or is refused.
local function check_layout(create, of)
  local m = redis.call('HMGET', META, 'v', 'nohist', 'hmin', 'hhour', 'shards', 'of')
  local v = m[1]
  HISTORY = not m[2]
  PRUNED.hmin, PRUNED.hhour = m[3], m[4]
  if m[5] then
    return error('redelay: sharded queue: it has ' .. m[5] .. ' shards')
  end
  if of and of ~= '0' and m[6] ~= of then
    return error('redelay: shard not marked: it is marked ' .. (m[6] or 'as none') .. ', not ' .. of)
  end
  if v == LAYOUT then return end
  if v then
    return error('redelay: queue data has layout ' .. v .. '; this client reads layout ' .. LAYOUT)
  end
  local t = redis.call('TYPE', LEGACY)
  if t.ok == 'hash' then
    return error('redelay: queue data has layout 1 (redelay 0.1); drain it with redelay 0.1 first')
  end
  if create then
    redis.call('HSET', META, 'v', LAYOUT)
    redis.call('SET', LEGACY, 'redelay layout ' .. LAYOUT .. ': use redelay >= 0.2')
    return true
  end
end

-- Parses a record's header; nil when the record is not one this layout can read.
local function decode(rec)
  if type(rec) ~= 'string' or #rec < HDR_LEN then return nil end
  local ok, v, fl, att, max, ttr, bb, bm, seq, pub, due, exp, tok, blen, elen = pcall(struct.unpack, HDR, rec)
  if not ok or v ~= VERSION or #rec < HDR_LEN + elen then return nil end
  return { flags = fl, att = att, max = max, ttr = ttr, bb = bb, bm = bm, seq = seq, pub = pub,
           due = due, exp = exp, tok = tok, blen = blen,
           err = string.sub(rec, HDR_LEN + 1, HDR_LEN + elen), tail = HDR_LEN + elen + 1 }
end

-- Rebuilds a record from a decoded header `r` and the original record (for its inline blob).
local function encode(r, rec)
  local err = string.sub(r.err, 1, 4000)
  return struct.pack(HDR, VERSION, r.flags, math.min(r.att, 65535), r.max, r.ttr, r.bb, r.bm, r.seq,
    r.pub, r.due, r.exp, r.tok, r.blen, #err) .. err .. string.sub(rec, r.tail)
end

local function member(seq, id) return struct.pack('>I6', seq) .. id end
local function member_id(m) return string.sub(m, 7) end

-- A settle's check that a lease still runs: true for a SCHED member whose lease deadline is at
-- or before `now` (ms) although no fetch reclaimed it yet. Such a lease is lost like a
-- reclaimed one: a settle of it is refused and changes nothing, and the next fetch counts it as
-- a failed attempt. One range read finds the few lapsed leases of a queue (usually none); with
-- many, each settle reads its own score.
local function lease_lapsed(now)
  local lapsed = redis.call('ZRANGEBYSCORE', SCHED, LEASED, LEASED + now, 'LIMIT', 0, 64)
  if #lapsed < 64 then
    local set = {}
    for _, m in ipairs(lapsed) do set[m] = true end
    return function(m) return set[m] == true end
  end
  return function(m)
    local s = redis.call('ZSCORE', SCHED, m)
    return s == false or tonumber(s) <= LEASED + now
  end
end

-- Due time of the earliest waiting message, or nil.
local function first_waiting()
  local r = redis.call('ZRANGE', SCHED, 0, 0, 'WITHSCORES')
  if r[2] and tonumber(r[2]) < LEASED then return tonumber(r[2]) end
  return nil
end

-- Exponential backoff with equal jitter: half fixed, half random (jitter in [0,1)), capped.
local function backoff(r, jitter)
  local exp = math.min(r.bm, r.bb * 2 ^ math.max(r.att - 1, 0))
  return math.floor(exp / 2 + exp / 2 * jitter)
end

-- Tells idle consumers about a new earliest due time (payload: due ms).
local function wake_if_earlier(before, new_min)
  if new_min and (before == nil or new_min < before) then
    redis.call('PUBLISH', WAKE, fmt_int(new_min))
  end
end

-- Makes `r` (record `rec` of `id`, waiting or leased) a dead letter with `reason`.
local function bury(id, r, rec, reason, now)
  redis.call('ZREM', SCHED, member(r.seq, id))
  r.flags = bit.bor(r.flags, F_DEAD)
  r.tok = ZERO_TOKEN
  r.err = reason
  redis.call('HSET', MSG, id, encode(r, rec))
  redis.call('ZADD', DIED, now, id)
end

-- Deletes a message for good.
local function delete(id, r)
  if r then
    if has(r.flags, F_DEAD) then redis.call('ZREM', DIED, id)
    else redis.call('ZREM', SCHED, member(r.seq, id)) end
    if not has(r.flags, F_INLINE) then redis.call('HDEL', BODY, id) end
  end
  redis.call('HDEL', MSG, id)
end

-- The dead letters a respawn or purge call works on, from ARGV[b + 1] on (b = `base`, the
-- script's own leading arguments, default 0); below, ARGV[i] means ARGV[b + i].
-- ARGV[1] = 'ids', then the ids; or
-- ARGV[1] = 'oldest', ARGV[2] = how many, ARGV[3] = T0, ARGV[4] = S0, ARGV[5] = offset: the
-- oldest dead letters that died at or before T0 (ms) and were last (re)scheduled with a seq at
-- or below S0, from `offset` on (the entries before it were skipped by earlier calls). T0 and
-- S0 are -1 on the first call of a run: the current time and seq, which the reply hands back so
-- that every later call works on the same snapshot (a message respawned by this run that dies
-- again is not in it, and neither is one that died after the run began).
-- Returns the ids and, in 'oldest' mode, the snapshot { t0, s0, exhausted }.
local function dead_selection(now, base)
  local b = base or 0
  if ARGV[b + 1] == 'ids' then
    local ids = {}
    for i = b + 2, #ARGV do ids[#ids + 1] = ARGV[i] end
    return ids, nil
  end
  local t0, s0 = tonumber(ARGV[b + 3]), tonumber(ARGV[b + 4])
  if t0 < 0 then t0 = now end
  if s0 < 0 then s0 = tonumber(redis.call('HGET', META, 'seq') or '0') end
  local step = tonumber(ARGV[b + 2])
  local ids = redis.call('ZRANGEBYSCORE', DIED, '-inf', t0, 'LIMIT', tonumber(ARGV[b + 5]), step)
  return ids, { t0 = t0, s0 = s0, exhausted = #ids < step }
end

-- Appends a listed message to `out` (id, score, record or false, blob or false) unless the page
-- already holds `budget` bytes of records and blobs (the first always goes in). Returns the
-- bytes now in the page, or nil when the page is full.
local function page_item(out, id, score, bytes, budget, first)
  local rec = redis.call('HGET', MSG, id)
  local d = decode(rec)
  local blob = false
  if d and not has(d.flags, F_INLINE) then blob = redis.call('HGET', BODY, id) or false end
  local size = (rec and #rec or 0) + (blob and #blob or 0)
  if not first and bytes + size > budget then return nil end
  out[#out + 1] = id
  out[#out + 1] = score
  out[#out + 1] = rec or false
  out[#out + 1] = blob
  return bytes + size
end

-- History: adds `counts` (name -> n) to this minute's, this hour's and the total counters,
-- with one HINCRBY each (nothing for a zero). Once per new minute it also deletes the minutes
-- older than 2 days and the hours older than 90 days (at most 120 of each per call).
local MINUTES_KEPT, HOURS_KEPT = 2880, 2160
-- Written out: this runs on every call, and number-to-string conversions cost microseconds.
local HIST_NAMES = {
  'p', 'd', 'a', 'r', 'x', 'e', 'l0', 'l1', 'l2', 'l3', 'l4', 'l5', 'l6', 'l7', 'l8', 'l9',
  'l10', 'l11', 'l12', 'l13', 'l14', 'l15', 'ls',
}
-- Deletes the counters of `kind` units that fell out of the `kept` window since unit `last`
-- (at most 120 units' worth per call: bounded work after a long quiet spell).
local function prune(kind, last, now_unit, kept)
  local from = math.max(last - kept + 1, now_unit - kept - 119)
  local dead = {}
  for u = from, now_unit - kept do
    for _, n in ipairs(HIST_NAMES) do dead[#dead + 1] = kind .. fmt_int(u) .. ':' .. n end
  end
  if #dead > 0 then redis.call('HDEL', HIST, unpack(dead)) end
end
-- The counters of `minute` (the unfolded one, meta `hmin`).
local function minute_counts(minute)
  local pre, f = 'm' .. fmt_int(minute) .. ':', {}
  for i, n in ipairs(HIST_NAMES) do f[i] = pre .. n end
  return redis.call('HMGET', HIST, unpack(f))
end
-- Adds the counters of `minute` to its hour (unless that hour is out of the window by now)
-- and to the totals; deletes them when the minute itself is out of the window by now.
local function fold(minute, minute_now)
  local v = minute_counts(minute)
  local hour = math.floor(minute / 60)
  local h = 'h' .. fmt_int(hour) .. ':'
  local kept_hour = hour > math.floor(minute_now / 60) - HOURS_KEPT
  for i, n in ipairs(HIST_NAMES) do
    if v[i] then
      if kept_hour then redis.call('HINCRBY', HIST, h .. n, v[i]) end
      redis.call('HINCRBY', HIST, 't:' .. n, v[i])
    end
  end
  if minute <= minute_now - MINUTES_KEPT then
    local pre, dead = 'm' .. fmt_int(minute) .. ':', {}
    for _, n in ipairs(HIST_NAMES) do dead[#dead + 1] = pre .. n end
    redis.call('HDEL', HIST, unpack(dead))
  end
end
-- Counts `counts` (name -> n) at `now`. An event is written once, into its minute; the hour and
-- the totals get a minute's counters when the next minute begins (the first call in a later
-- minute folds the previous one in). Until then meta `hmin` names the unfolded minute, which
-- history.lua adds when it reads hours or totals. A Redis clock that stepped back counts into
-- the unfolded minute, so that nothing is left unfolded behind it.
local function hist(counts, now)
  if not HISTORY then return end
  local minute = math.floor(now / 60000)
  local last = tonumber(PRUNED.hmin)
  if last and minute < last then minute = last end
  local hour = math.floor(minute / 60)
  if last ~= minute then
    if last then fold(last, minute) end
    redis.call('HSET', META, 'hmin', minute)
    PRUNED.hmin = minute -- a script may count twice; the fold must happen once
    prune('m', last or minute - 1, minute, MINUTES_KEPT)
  end
  local m = 'm' .. fmt_int(minute) .. ':'
  for name, n in pairs(counts) do
    if n > 0 then redis.call('HINCRBY', HIST, m .. name, n) end
  end
  local last_hour = tonumber(PRUNED.hhour or hour - 1)
  if last_hour < hour then
    redis.call('HSET', META, 'hhour', hour)
    PRUNED.hhour = hour
    prune('h', last_hour, hour, HOURS_KEPT)
  end
end

-- The lateness bucket of `ms`: l0 under 1 ms, then one per power of two, l15 from 16.384 s.
-- (Names from HIST_NAMES, index 8 = l1: no number-to-string conversion per message.)
local LN2 = math.log(2)
local function lateness_bucket(ms)
  if ms < 1 then return 'l0' end
  local b = math.floor(math.log(ms) / LN2) + 1
  if b > 15 then b = 15 end
  return HIST_NAMES[b + 7]
end

-- Calls that change state and answer from it (ack, nack, cancel, respawn, purge) cannot tell,
-- when run twice, that the first run was theirs: an ack sent again finds its message gone and
-- would report the lease lost. On Redis Cluster the client sends a call again by itself when
-- its connection drops, even when Redis ran it; there such a call carries KEYS[9], a replay
-- hash of the caller's, and its ARGV start with: the call's field in it ('' = keep nothing), a
-- count k, then k fields of calls whose replies arrived (deleted here). replay_begin returns
-- the index of the call's first own ARGV and, when this call ran already, the reply it gave (a
-- string); replay_keep stores the reply for a resend and returns it. The hash expires 5 minutes
-- after the caller's last such call. replay_first is that index alone, touching nothing (for an
-- argument that check_layout needs before anything is written).
local function replay_first()
  if not KEYS[9] then return 1 end
  return 3 + tonumber(ARGV[2])
end
local function replay_begin()
  local key = KEYS[9]
  local first = replay_first()
  if not key then return first, nil end
  if first > 3 then redis.call('HDEL', key, unpack(ARGV, 3, first - 1)) end
  if ARGV[1] == '' then return first, nil end
  return first, redis.call('HGET', key, ARGV[1])
end
local function replay_keep(reply)
  local key = KEYS[9]
  if key and ARGV[1] ~= '' then
    redis.call('HSET', key, ARGV[1], reply)
    redis.call('PEXPIRE', key, 300000)
  end
  return reply
end
-- The same for a reply that is a list of integers (kept as decimals joined by ',').
local function replay_keep_numbers(reply)
  replay_keep(table.concat(reply, ','))
  return reply
end
local function replayed_numbers(kept)
  local out = {}
  for v in string.gmatch(kept, '[^,]+') do out[#out + 1] = tonumber(v) end
  return out
end
