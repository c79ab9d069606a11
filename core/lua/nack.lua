-- nack.lua: give a batch of leased messages back: retry later, or dead letter at max_attempts.
-- KEYS: the queue's keys (lib.lua); on Redis Cluster KEYS[9], the caller's replay hash
-- ARGV: (on Redis Cluster: lib.lua's replay_begin arguments, then) groups of 5: id, lease
--   token, mode, value, reason
--   mode 'b': retry after the message's backoff, value = jitter in [0,1)
--   mode 'd': retry after value ms
--   mode 'r': release unprocessed (no attempt counted, due again at its due time)
--   mode 'x': dead letter now, whatever the attempts (the client could not read the record or
--             the handler's runtime failed)
-- Reply: one byte per group: '1' scheduled for retry, '2' moved to DIED, '0' lease lost (the
-- token is not the current lease, or that lease ran out: unchanged); a call sent again after it
-- ran gets its first reply
local now = clock()
check_layout(false)
local first, ran = replay_begin()
if ran then return ran end
local before = first_waiting()
local lapsed = lease_lapsed(now)
local new_min = nil
local out, ids, seen = {}, {}, {}
local retried, dead = 0, 0
for i = first, #ARGV, 5 do ids[#ids + 1] = ARGV[i] end
local recs = redis.call('HMGET', MSG, unpack(ids))
for k, id in ipairs(ids) do
  local i = first + 5 * k - 5
  local tok, mode = ARGV[i + 1], ARGV[i + 2]
  local rec = recs[k]
  local r = decode(rec)
  if seen[id] or not r or r.tok ~= tok or not is_leased(r) or lapsed(member(r.seq, id)) then
    out[#out + 1] = '0'
  else
    seen[id] = true
    r.tok = ZERO_TOKEN
    if mode ~= 'r' then
      r.att = r.att + 1
      r.err = ARGV[i + 4]
    end
    if mode == 'x' or (mode ~= 'r' and r.att >= r.max) then
      bury(id, r, rec, r.err, now)
      dead = dead + 1
      out[#out + 1] = '2'
    else
      if mode == 'd' then r.due = now + tonumber(ARGV[i + 3])
      elseif mode == 'b' then r.due = now + backoff(r, tonumber(ARGV[i + 3])) end
      redis.call('HSET', MSG, id, encode(r, rec))
      redis.call('ZADD', SCHED, r.due, member(r.seq, id))
      if new_min == nil or r.due < new_min then new_min = r.due end
      if mode ~= 'r' then retried = retried + 1 end
      out[#out + 1] = '1'
    end
  end
end
wake_if_earlier(before, new_min)
hist({ r = retried, x = dead }, now)
return replay_keep(table.concat(out))
