-- peek.lua: look at one message without changing anything.
-- KEYS: the queue's keys in the standard order of lib.lua (jobs, delayed, ready, leased, tokens,
--   dead, seq, wake)
-- ARGV[1] id
-- Reply: false when there is no such id, else { now_ms, state, score_ms, record } where state is
-- 'scheduled' (score = due), 'ready' (due, waiting for a consumer; score = due or -1),
-- 'leased' (score = lease deadline) or 'dead' (score = time it died)
local id = ARGV[1]
local now = clock()
local rec = redis.call('HGET', JOBS, id)
if not rec then return false end
local r = decode(rec)
if r then
  local due = redis.call('ZSCORE', DELAYED, member(r.seq, id))
  if due then
    due = tonumber(due)
    if due > now then return { now, 'scheduled', due, rec } end
    return { now, 'ready', due, rec }
  end
end
local s = redis.call('ZSCORE', LEASED, id)
if s then return { now, 'leased', tonumber(s), rec } end
s = redis.call('ZSCORE', DEAD, id)
if s then return { now, 'dead', tonumber(s), rec } end
return { now, 'ready', -1, rec }
