-- nack.lua: give a batch of leased messages back: retry later, or dead letter at max_attempts.
-- KEYS: the queue's keys in the standard order of lib.lua (jobs, delayed, ready, leased, tokens,
--   dead, seq, wake)
-- ARGV: groups of 5: id, lease token, mode, value, reason
--   mode 'b': retry after the message's backoff, value = jitter in [0,1)
--   mode 'd': retry after value ms
--   mode 'r': release unprocessed (no attempt counted, due now)
--   mode 'x': dead letter now, whatever the attempts (the client could not read the record)
-- Reply: one integer per group: 1 scheduled for retry, 2 moved to DEAD, 0 lease lost (unchanged)
local now = clock()
local before = first_score(DELAYED)
local new_min = nil
local out = {}
for i = 1, #ARGV, 5 do
  local id, mode = ARGV[i], ARGV[i + 2]
  if redis.call('HGET', TOKENS, id) ~= ARGV[i + 1] then
    out[#out + 1] = 0
  else
    redis.call('HDEL', TOKENS, id)
    redis.call('ZREM', LEASED, id)
    local rec = redis.call('HGET', JOBS, id)
    local r = decode(rec)
    if not r then
      bury_corrupt(id, now)
      out[#out + 1] = 2
    else
      if mode ~= 'r' then
        r.att = r.att + 1
        r.err = ARGV[i + 4]
      end
      if mode == 'x' or (mode ~= 'r' and r.att >= r.max) then
        bury(id, r, rec, r.err, now)
        out[#out + 1] = 2
      else
        local delay = 0
        if mode == 'd' then delay = tonumber(ARGV[i + 3])
        elseif mode == 'b' then delay = backoff(r, tonumber(ARGV[i + 3])) end
        r.due = now + delay
        redis.call('HSET', JOBS, id, encode(r, rec))
        redis.call('ZADD', DELAYED, r.due, member(r.seq, id))
        if new_min == nil or r.due < new_min then new_min = r.due end
        out[#out + 1] = 1
      end
    end
  end
end
wake_if_earlier(before, new_min)
return out
