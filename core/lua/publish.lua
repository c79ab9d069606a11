-- publish.lua: store a batch of messages and schedule each one, exactly as if they were
-- published one by one in order (an id repeated within the batch sees the earlier one).
-- KEYS: the queue's keys (lib.lua)
-- ARGV[1] count n, then 3 per message:
--   id ('' = generate one: the decimal seq)
--   spec: the record's first 18 bytes (version, flags INLINE/DROP, attempts 0, max_attempts,
--     ttr, backoff base, backoff max: lib.lua), then '>BBI6BI6': replace (1 replaces an
--     existing id, 0 reports a duplicate), due mode (0 = delay from now, 1 = absolute ms), due
--     value, expiry mode (0 none, 1 = ms from now, 2 = absolute ms), expiry value
--   blob (headers + body); it goes into the record when the spec flags it INLINE
-- then ARGV[3n+2] for a shard of a sharded queue the queue's shard count, which the shard's
--   META must carry as its mark `of` ('0' for a plain queue: lib.lua check_layout)
-- A call of a batch of several calls, and every call on a Redis Cluster (whose client sends a
--   call again by itself when its connection drops), also gets KEYS[9], the replay key of the
--   client's queue handle (a hash: field <batch id> = the index of the batch's last call that
--   ran, for batches of several calls; field <batch id>:<index> = that call's reply, seq0 as 6
--   bytes then the statuses; field 't' = when its expiry was last set, ms), and after the
--   shard count ARGV[3n+3] the batch id, ARGV[3n+4] the call's index in the batch (0-based),
--   ARGV[3n+5] the count of calls, then fields of earlier calls whose replies arrived (deleted
--   here). A call with an empty batch id only deletes.
-- Reply: { now_ms, seq0, statuses[, 1] }: statuses holds one byte per message, '1' stored, '0'
-- duplicate (unchanged), '2' replaced; a generated id is the decimal seq0 + its position (1-based).
-- The 1 at the end: this call made the queue (it had no data, as after a destroy), so the client
-- adds its name to the registry again, however long its handle has been registered.
-- A call whose predecessor has not run yet changes nothing and gets { now_ms, -1, '' }; a call
-- that ran already changes nothing and gets its first reply again. A shard that does not carry
-- the mark ARGV[3n+2] gets an error 'redelay: shard not marked' and nothing is written.
-- One message that replaces nothing, in a call without KEYS[9] (the common single publish),
-- takes a shorter path to the same writes and reply: about 2.5 µs of Redis CPU less
-- (bench/publish_cost.py).
local now = clock()
local n = tonumber(ARGV[1])
local created = check_layout(true, ARGV[3 * n + 2]) and 1 or nil

-- A batch's calls run in their order, once each: one that arrives before the call ahead of it
-- (a cluster redirect or a resend can reorder calls sent in order) is refused, and the client
-- sends it again once the calls ahead have run; one that arrives again (a resend after its
-- reply was lost) is answered from the replay key. So seqs, generated ids and duplicate
-- detection across calls follow the batch's order, nothing is stored twice, and a batch that
-- fails at one call has stored exactly the calls before it.
local CALLS, batch, idx, calls = KEYS[9], ARGV[3 * n + 3], tonumber(ARGV[3 * n + 4]), tonumber(ARGV[3 * n + 5])
local call, refresh -- this call's reply field, when it has one; true to set the key's expiry
if CALLS then
  if #ARGV > 3 * n + 5 then redis.call('HDEL', CALLS, unpack(ARGV, 3 * n + 6)) end
  if batch ~= '' then
    call = batch .. ':' .. ARGV[3 * n + 4]
    local ran = redis.call('HMGET', CALLS, call, batch, 't')
    if ran[1] then return { now, struct.unpack('>I6', ran[1]), string.sub(ran[1], 7) } end
    if calls > 1 and tonumber(ran[2] or '-1') < idx - 1 then return { now, -1, '' } end
    refresh = not ran[3] or now - tonumber(ran[3]) > 60000
  end
end

-- One message that replaces nothing, outside a batch of several calls (the common single
-- publish): the same result as the general path below, without its batch bookkeeping (no
-- tables of pending writes, no closures).
if n == 1 and not CALLS then
  local spec, blob = ARGV[3], ARGV[4]
  local replace, dmode, dval, xmode, xval = struct.unpack('>BBI6BI6', spec, 19)
  if replace ~= 1 then
    local seq = redis.call('HINCRBY', META, 'seq', 1)
    local id = ARGV[2]
    if id == '' then id = fmt_int(seq) end
    local due = dval
    if dmode == 0 then due = now + dval end
    local exp = 0
    if xmode == 1 then exp = now + xval elseif xmode == 2 then exp = xval end
    if redis.call('HGET', MSG, id) then
      hist({ p = 0 }, now)
      return { now, seq - 1, '0' }
    end
    local inline = has(string.byte(spec, 2), F_INLINE)
    local rec
    if inline then
      rec = struct.pack('>c18I6I6I6I6c8I4Hc0', spec, seq, now, due, exp, ZERO_TOKEN, #blob, 0, blob)
    else
      rec = struct.pack('>c18I6I6I6I6c8I4H', spec, seq, now, due, exp, ZERO_TOKEN, #blob, 0)
    end
    redis.call('HSET', MSG, id, rec)
    if not inline then redis.call('HSET', BODY, id, blob) end
    local before = first_waiting()
    redis.call('ZADD', SCHED, fmt_int(due), struct.pack('>I6c0', seq, id))
    wake_if_earlier(before, due)
    hist({ p = 1 }, now)
    return { now, seq - 1, '1', created }
  end
end

local seq0 = redis.call('HINCRBY', META, 'seq', n) - n
local before = first_waiting()
local new_min = nil

-- The decimal text of a generated id without a printf per id (a number-to-string conversion
-- costs more than the rest of a message's publish): each hundred's text once per call, the last
-- two digits from a table filled as needed.
local hundreds, two_digits = {}, {}
local function decimal(v)
  if v < 100 then return fmt_int(v) end
  local h = math.floor(v / 100)
  local r = v - h * 100
  local ht, rt = hundreds[h], two_digits[r]
  if not ht then
    ht = fmt_int(h)
    hundreds[h] = ht
  end
  if not rt then
    rt = string.char(48 + math.floor(r / 10), 48 + r % 10)
    two_digits[r] = rt
  end
  return ht .. rt
end

local ids = {}
for i = 1, n do
  local id = ARGV[3 * i - 1]
  if id == '' then id = decimal(seq0 + i) end
  ids[i] = id
end
local old = redis.call('HMGET', MSG, unpack(ids))

-- Pending writes, flushed with one variadic call each. at[id] is where an id of this batch sits
-- in msgs/zadd (and bat[id] in bodies), so that a later message with the same id sees (and may
-- replace) the earlier one.
local msgs, zadd, bodies, at, bat, status = {}, {}, {}, {}, {}, {}
local nm, nb = 0, 0 -- entries in msgs (and zadd), in bodies
local dropped = false
-- Due times as strings, one per distinct due time: a number argument of redis.call is
-- formatted with printf("%.14g") per call.
local due_text = {}
for i = 1, n do
  local id, spec, blob = ids[i], ARGV[3 * i], ARGV[3 * i + 1]
  local replace, dmode, dval, xmode, xval = struct.unpack('>BBI6BI6', spec, 19)
  local st = '1'
  local prev = at[id]
  if prev or old[i] then
    if replace ~= 1 then
      st = '0'
    else
      st = '2'
      if prev then
        msgs[prev], msgs[prev + 1], zadd[prev], zadd[prev + 1] = false, false, false, false
        local b = bat[id]
        if b then bodies[b], bodies[b + 1] = false, false end
        dropped = true
      else
        local r = decode(old[i])
        if r then delete(id, r)
        else
          redis.call('ZREM', DIED, id)
          redis.call('HDEL', BODY, id)
        end
      end
    end
  end
  if st ~= '0' then
    local seq = seq0 + i
    local due = dval
    if dmode == 0 then due = now + dval end
    local exp = 0
    if xmode == 1 then exp = now + xval elseif xmode == 2 then exp = xval end
    local k = nm + 1
    nm = nm + 2
    msgs[k] = id
    local dt = due_text[due]
    if not dt then
      dt = fmt_int(due)
      due_text[due] = dt
    end
    zadd[k] = dt
    zadd[k + 1] = struct.pack('>I6c0', seq, id) -- member(seq, id)
    -- The record in one pack: the client's first 18 bytes, the header's rest, the inline blob.
    if has(string.byte(spec, 2), F_INLINE) then
      msgs[k + 1] = struct.pack('>c18I6I6I6I6c8I4Hc0', spec, seq, now, due, exp, ZERO_TOKEN, #blob, 0, blob)
    else
      msgs[k + 1] = struct.pack('>c18I6I6I6I6c8I4H', spec, seq, now, due, exp, ZERO_TOKEN, #blob, 0)
      bat[id] = nb + 1
      bodies[nb + 1], bodies[nb + 2] = id, blob
      nb = nb + 2
    end
    at[id] = k
    if new_min == nil or due < new_min then new_min = due end
  end
  status[i] = st
end

-- Flush, skipping the writes a later message of the batch replaced.
local function flush(cmd, key, t)
  if dropped then
    local c = {}
    for _, v in ipairs(t) do if v then c[#c + 1] = v end end
    t = c
  end
  if #t > 0 then redis.call(cmd, key, unpack(t)) end
end
flush('HSET', MSG, msgs)
flush('HSET', BODY, bodies)
flush('ZADD', SCHED, zadd)

wake_if_earlier(before, new_min)
local stored = 0
for _, st in ipairs(status) do if st ~= '0' then stored = stored + 1 end end
hist({ p = stored }, now)
local statuses = table.concat(status)
if call then
  local set = { CALLS, call, struct.pack('>I6', seq0) .. statuses }
  if calls > 1 then set[4], set[5] = batch, ARGV[3 * n + 4] end
  -- The key expires 4 to 5 minutes after the handle's last call (longer than any call waits),
  -- so it goes away by itself when the client dies; its expiry is set again once a minute at
  -- most. The handle's later publishes delete a batch's fields once all its replies arrived.
  if refresh then set[#set + 1], set[#set + 2] = 't', fmt_int(now) end
  redis.call('HSET', unpack(set))
  if refresh then redis.call('PEXPIRE', CALLS, 300000) end
end
return { now, seq0, statuses, created }
