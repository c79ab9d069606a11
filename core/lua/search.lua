-- search.lua: one bounded step of a search over every message (any state): HSCAN of the records
-- from a cursor, matching each against the query in Lua.
-- KEYS: the queue's keys (lib.lua)
-- ARGV[1] HSCAN cursor ('0' to start), ARGV[2] records to scan in this step (HSCAN COUNT),
-- ARGV[3] what: 'id' (id prefix), 'header' (ARGV[5] = name, ARGV[4] = value), 'body' (substring
-- of the body, text or bytes), 'error' (substring of the last error); ARGV[4] the needle
-- Reply: { next cursor ('0' when the scan is complete), scanned, now_ms, then 3 per match: id,
-- record, and its time of death (dead) or lease deadline (leased) in ms, else -1; then one blob
-- per match, in order (false when inline in the record, or longer than BLOB_MAX) }
-- A step reads about COUNT records (HSCAN may return a few more), and a body kept apart from its
-- record only when it is at most BLOB_MAX bytes: headers and bodies longer than that are not
-- searched. A million records take a few thousand steps of a few milliseconds each.
check_layout(false)
local cursor, count, what, needle, hname = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5]
local BLOB_MAX = 65536

-- The value of header `name` in blob `b`, or nil (blob: u16 count, then (u16 len, name, u32 len,
-- value) pairs, then the body).
local function header(b, name)
  if not b or #b < 2 then return nil end
  local n = struct.unpack('>H', b, 1)
  local pos = 3
  for _ = 1, n do
    if pos + 1 > #b then return nil end
    local kl = struct.unpack('>H', b, pos)
    local k = string.sub(b, pos + 2, pos + 1 + kl)
    pos = pos + 2 + kl
    if pos + 3 > #b then return nil end
    local vl = struct.unpack('>I4', b, pos)
    local v = string.sub(b, pos + 4, pos + 3 + vl)
    pos = pos + 4 + vl
    if k == name then return v end
  end
  return nil
end
local function body_of(b)
  if not b or #b < 2 then return '' end
  local n = struct.unpack('>H', b, 1)
  local pos = 3
  for _ = 1, n do
    local kl = struct.unpack('>H', b, pos)
    pos = pos + 2 + kl
    local vl = struct.unpack('>I4', b, pos)
    pos = pos + 4 + vl
  end
  return string.sub(b, pos)
end

local now = clock()
local page = redis.call('HSCAN', MSG, cursor, 'COUNT', count)
local kv = page[2]
local out = { page[1], #kv / 2, now }
local blobs = {}
for i = 1, #kv, 2 do
  local id, rec = kv[i], kv[i + 1]
  local r = decode(rec)
  local hit = false
  if what == 'id' then
    hit = string.sub(id, 1, #needle) == needle
  elseif r and what == 'error' then
    hit = #r.err > 0 and string.find(r.err, needle, 1, true) ~= nil
  elseif r then
    local blob
    if has(r.flags, F_INLINE) then blob = string.sub(rec, r.tail)
    elseif r.blen <= BLOB_MAX then blob = redis.call('HGET', BODY, id) end
    if what == 'header' then hit = header(blob, hname) == needle
    elseif what == 'body' then hit = string.find(body_of(blob), needle, 1, true) ~= nil end
  end
  if hit then
    local when = -1
    if r and has(r.flags, F_DEAD) then
      when = tonumber(redis.call('ZSCORE', DIED, id) or -1)
    elseif r and is_leased(r) then
      local s = redis.call('ZSCORE', SCHED, member(r.seq, id))
      if s then when = tonumber(s) - LEASED end
    end
    out[#out + 1] = id
    out[#out + 1] = rec
    out[#out + 1] = when
    if r and not has(r.flags, F_INLINE) and r.blen <= BLOB_MAX then
      blobs[#blobs + 1] = redis.call('HGET', BODY, id) or false
    else
      blobs[#blobs + 1] = false
    end
  end
end
for _, b in ipairs(blobs) do out[#out + 1] = b end
return out
