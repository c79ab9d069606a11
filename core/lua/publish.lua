-- publish.lua: store a batch of messages and schedule each one.
-- KEYS: the queue's keys in the standard order of lib.lua (jobs, delayed, ready, leased, tokens,
--   dead, seq, wake)
-- ARGV[1] count n, then 9 per message: id ('' = generate from seq), replace ('1' replaces an
-- existing id, '0' reports it as a duplicate), due mode ('d' delay | 'a' absolute), due value ms,
-- max_attempts, ttr_ms, backoff_base_ms, backoff_max_ms, tail (headers + body)
-- Reply: { now_ms, id_1, status_1, ..., id_n, status_n }; status 1 stored, 0 duplicate
-- (unchanged), 2 replaced. Every message goes through `delayed` (a due one with its due time
-- in the past), so fetch promotes strictly by (due time, publish order).
local now = clock()
local n = tonumber(ARGV[1])
local seq0 = redis.call('INCRBY', SEQ, n) - n
local before = first_score(DELAYED)
local new_min = nil
local out = { now }

local zadd = {}
for i = 0, n - 1 do
  local a = 2 + i * 9
  local seq = seq0 + i + 1
  local id = ARGV[a]
  if id == '' then id = fmt_int(seq) end
  local due = tonumber(ARGV[a + 3])
  if ARGV[a + 2] == 'd' then due = now + due end
  local rec = struct.pack(HDR, VERSION, 0, tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5]),
    tonumber(ARGV[a + 6]), tonumber(ARGV[a + 7]), seq, now, due) .. struct.pack('>H', 0) .. ARGV[a + 8]
  local status = 1
  if ARGV[a + 1] ~= '1' then
    -- The common path: one HSETNX both checks for a duplicate and stores.
    if redis.call('HSETNX', JOBS, id, rec) == 0 then status = 0 end
  else
    local old = redis.call('HGET', JOBS, id)
    if old then
      status = 2
      local r = decode(old)
      local removed = 0
      if r then removed = redis.call('ZREM', DELAYED, member(r.seq, id)) end
      if removed == 0 then
        if redis.call('ZREM', LEASED, id) == 1 then
          redis.call('HDEL', TOKENS, id)
        elseif redis.call('ZREM', DEAD, id) == 0 then
          redis.call('LREM', READY, 1, id)
        end
      end
    end
    redis.call('HSET', JOBS, id, rec)
  end
  if status ~= 0 then
    zadd[#zadd + 1] = due
    zadd[#zadd + 1] = member(seq, id)
    if new_min == nil or due < new_min then new_min = due end
  end
  out[#out + 1] = id
  out[#out + 1] = status
end
if #zadd > 0 then redis.call('ZADD', DELAYED, unpack(zadd)) end

wake_if_earlier(before, new_min)
return out
