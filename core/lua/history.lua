-- history.lua: read history counters (lib.lua's HIST).
-- KEYS: the queue's keys (lib.lua)
-- ARGV[1] kind ('m' minutes, 'h' hours, 't' totals), ARGV[2] first unit (minutes or hours since
-- the epoch; ignored for totals), ARGV[3] how many units (at most 1440; 1 for totals)
-- Reply: { now_ms, then 23 integers per unit: p d a r x e l0 .. l15 ls }; hours and totals
-- include the minute not yet folded into them
check_layout(false)
local now = clock()
local kind, first, n = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local fields = {}
for u = 0, n - 1 do
  local pre = 't:'
  if kind ~= 't' then pre = kind .. fmt_int(first + u) .. ':' end
  for _, name in ipairs(HIST_NAMES) do fields[#fields + 1] = pre .. name end
end
-- HMGET in slices of 100 units: Lua's unpack takes fewer than 8,000 values, and 1,440 units
-- are 33,120 fields.
local out, slice = { now }, 100 * #HIST_NAMES
for s = 1, #fields, slice do
  local v = redis.call('HMGET', HIST, unpack(fields, s, math.min(s + slice - 1, #fields)))
  for i = 1, #v do out[#out + 1] = tonumber(v[i] or 0) end
end
-- The unfolded minute (lib.lua's hist) belongs to its hour and to the totals already.
local unfolded = tonumber(PRUNED.hmin)
if unfolded and kind ~= 'm' then
  local u = 0
  if kind == 'h' then u = math.floor(unfolded / 60) - first end
  if u >= 0 and u < n then
    local m, base = minute_counts(unfolded), 1 + u * #HIST_NAMES
    for i = 1, #HIST_NAMES do out[base + i] = out[base + i] + tonumber(m[i] or 0) end
  end
end
return out
