-- cancel.lua: delete a message wherever it is (scheduled, ready, leased or dead). O(log n).
-- KEYS: the queue's keys (lib.lua)
-- ARGV[1] id
-- Reply: 1 deleted, 0 no such id. A consumer holding its lease gets "lease lost" on settling.
check_layout(false)
local id = ARGV[1]
local rec = redis.call('HGET', MSG, id)
if not rec then return 0 end
local r = decode(rec)
if not r then
  redis.call('ZREM', DIED, id)
  redis.call('HDEL', BODY, id)
end
delete(id, r)
return 1
