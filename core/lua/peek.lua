-- peek.lua: look at one message without changing anything.
-- KEYS: the queue's keys (lib.lua)
-- ARGV[1] id
-- Reply: false when there is no such id, else { now_ms, state, score_ms, record, blob } where
-- state is 'scheduled' (score = due), 'ready' (due, waiting for a consumer; score = due),
-- 'leased' (score = lease deadline) or 'dead' (score = time it died); blob is false when it is
-- inline in the record (or the record is unreadable)
check_layout(false)
local now = clock()
local id = ARGV[1]
local rec = redis.call('HGET', MSG, id)
if not rec then return false end
local r = decode(rec)
if not r then
  local s = redis.call('ZSCORE', DIED, id)
  return { now, 'dead', tonumber(s or -1), rec, false }
end
local blob = false
if not has(r.flags, F_INLINE) then blob = redis.call('HGET', BODY, id) end
if has(r.flags, F_DEAD) then
  return { now, 'dead', tonumber(redis.call('ZSCORE', DIED, id) or -1), rec, blob }
end
if is_leased(r) then
  local s = redis.call('ZSCORE', SCHED, member(r.seq, id))
  return { now, 'leased', s and (tonumber(s) - LEASED) or -1, rec, blob }
end
if r.due > now then return { now, 'scheduled', r.due, rec, blob } end
return { now, 'ready', r.due, rec, blob }
