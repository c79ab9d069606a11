-- ack.lua: acknowledge a batch of leased messages: each is deleted for good.
-- KEYS: the queue's keys (lib.lua); on Redis Cluster KEYS[9], the caller's replay hash
-- ARGV: (on Redis Cluster: lib.lua's replay_begin arguments, then) pairs of id, lease token
--   (8 bytes)
-- Reply: one byte per pair: '1' acknowledged, '0' lease lost (the token is not the current lease,
-- or that lease ran out: nothing changed for that id); a call sent again after it ran gets its
-- first reply
-- Batched: one HMGET for the records, then one ZREM / HDEL / HDEL for all that match.
check_layout(false)
local first, ran = replay_begin()
if ran then return ran end
local now = clock()
local lapsed = lease_lapsed(now)
local ids, out, ok, members, big, seen = {}, {}, {}, {}, {}, {}
local n, nbig = (#ARGV - first + 1) / 2, 0 -- pairs; ids whose blob is in BODY
for i = 1, n do ids[i] = ARGV[first + 2 * i - 2] end
local recs = redis.call('HMGET', MSG, unpack(ids))
local nok = 0
for i = 1, n do
  local id, rec = ids[i], recs[i]
  -- a record that is not leased stores the zero token, and a fetch never issues it: a match
  -- with any other token means "leased by this holder"
  local tok = ARGV[first + 2 * i - 1]
  local m = rec and not seen[id] and tok ~= ZERO_TOKEN and string.sub(rec, 43, 50) == tok and string.sub(rec, 19, 24) .. id
  if m and not lapsed(m) then
    seen[id] = true
    nok = nok + 1
    ok[nok] = id
    members[nok] = m
    if bit.band(string.byte(rec, 2), F_INLINE) == 0 then
      nbig = nbig + 1
      big[nbig] = id
    end
    out[i] = '1'
  else
    out[i] = '0'
  end
end
if #ok > 0 then
  -- Deletes first: at maxmemory (noeviction) Redis refuses a script whose first write may
  -- grow memory (HINCRBY), not one that already wrote, so acks still drain a full server.
  redis.call('ZREM', SCHED, unpack(members))
  redis.call('HDEL', MSG, unpack(ok))
  if #big > 0 then redis.call('HDEL', BODY, unpack(big)) end
  hist({ a = #ok }, now)
end
return replay_keep(table.concat(out))
