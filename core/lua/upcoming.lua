-- upcoming.lua: how many waiting messages fall due in each of `n` consecutive buckets — the
-- future load. O(n log N): one ZCOUNT per bucket.
-- KEYS: the queue's keys (lib.lua)
-- ARGV[1] start ms (inclusive), ARGV[2] bucket width ms, ARGV[3] n buckets (at most 1000)
-- Reply: { now_ms, count_1, ..., count_n }; bucket i covers [start + (i-1)*width, start + i*width)
-- (leased messages are not waiting and are not counted)
check_layout(false)
local now = clock()
local start, width, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local out = { now }
for i = 0, n - 1 do
  local lo, hi = start + i * width, math.min(start + (i + 1) * width, LEASED)
  if lo >= LEASED then out[#out + 1] = 0
  else out[#out + 1] = redis.call('ZCOUNT', SCHED, lo, '(' .. fmt_int(hi)) end
end
return out
