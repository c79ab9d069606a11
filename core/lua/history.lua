-- history.lua: read history counters (lib.lua's HIST).
-- KEYS: the queue's keys (lib.lua)
-- ARGV[1] kind ('m' minutes, 'h' hours, 't' totals), ARGV[2] first unit (minutes or hours since
-- the epoch; ignored for totals), ARGV[3] how many units (at most 1440; 1 for totals)
-- Reply: { now_ms, then 23 integers per unit: p d a r x e l0 .. l15 ls }
check_layout(false)
local now = clock()
local kind, first, n = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local fields = {}
for u = 0, n - 1 do
  local pre = 't:'
  if kind ~= 't' then pre = kind .. fmt_int(first + u) .. ':' end
  for _, name in ipairs(HIST_NAMES) do fields[#fields + 1] = pre .. name end
end
local v = redis.call('HMGET', HIST, unpack(fields))
local out = { now }
for i = 1, #fields do out[#out + 1] = tonumber(v[i] or 0) end
return out
