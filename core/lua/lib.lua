-- lib.lua: helpers prepended to every other script by scripts.rs (Redis Lua has no `require`).
-- It defines locals only and touches no key.
--
-- Record layout (one hash field per message in P:{Q}:jobs), big-endian:
--   header  '>BHHI4I4I4I6I6I6' (35 bytes):
--           version(=1), attempts (failed attempts so far), max_attempts, ttr_ms,
--           backoff_base_ms, backoff_max_ms, seq (publish sequence), published_at_ms, due_at_ms
--   '>H' error length, then the last error text
--   tail    opaque to Lua (headers + body, written and read by the Rust client only)
-- Delayed-set members are struct.pack('>I6', seq) .. id, so that messages due in the same
-- millisecond sort by publish order; every other set and the ready list hold the bare id.

-- Every script gets the queue's keys in this one order (keys.rs builds it):
local JOBS, DELAYED, READY, LEASED, TOKENS, DEAD, SEQ, WAKE =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]

local HDR = '>BHHI4I4I4I6I6I6'
local HDR_LEN = 35
local VERSION = 1

-- Redis server time in whole milliseconds, and the microseconds past that millisecond.
local function clock()
  local t = redis.call('TIME')
  local us = tonumber(t[2])
  return tonumber(t[1]) * 1000 + math.floor(us / 1000), us % 1000
end

local function fmt_int(n) return string.format('%.0f', n) end

-- Parses a record's header; nil when the record is not one this version can read.
local function decode(rec)
  if type(rec) ~= 'string' or #rec < HDR_LEN + 2 then return nil end
  local ok, v, att, max, ttr, bb, bm, seq, pub, due = pcall(struct.unpack, HDR, rec)
  if not ok or v ~= VERSION then return nil end
  local errlen = struct.unpack('>H', rec, HDR_LEN + 1)
  if #rec < HDR_LEN + 2 + errlen then return nil end
  return { att = att, max = max, ttr = ttr, bb = bb, bm = bm, seq = seq, pub = pub, due = due,
           err = string.sub(rec, HDR_LEN + 3, HDR_LEN + 2 + errlen), tail = HDR_LEN + 3 + errlen }
end

-- Only what fetch needs: the ttr of a readable record, else nil (cheaper than decode).
local function ttr_of(rec)
  if type(rec) ~= 'string' or #rec < HDR_LEN + 2 then return nil end
  local v, _, _, ttr = struct.unpack('>BHHI4', rec)
  if v ~= VERSION then return nil end
  return ttr
end

-- Rebuilds a record from a decoded header `r` and the original record's tail.
local function encode(r, rec)
  local err = string.sub(r.err, 1, 4000)
  return struct.pack(HDR, VERSION, math.min(r.att, 65535), r.max, r.ttr, r.bb, r.bm, r.seq, r.pub, r.due)
    .. struct.pack('>H', #err) .. err .. string.sub(rec, r.tail)
end

local function member(seq, id) return struct.pack('>I6', seq) .. id end
local function member_id(m) return string.sub(m, 7) end

-- Score of the first element of a sorted set, or nil when it is empty.
local function first_score(zset)
  local r = redis.call('ZRANGE', zset, 0, 0, 'WITHSCORES')
  if r[2] then return tonumber(r[2]) end
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

-- Moves a record to the dead set with `reason`, counting nothing further.
local function bury(id, r, rec, reason, now)
  r.err = reason
  redis.call('HSET', JOBS, id, encode(r, rec))
  redis.call('ZADD', DEAD, now, id)
end

-- Moves a record this version cannot read aside: dead set, record left as it is for inspection.
local function bury_corrupt(id, now)
  redis.call('ZADD', DEAD, now, id)
end
