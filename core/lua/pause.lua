-- pause.lua: pause or resume a queue. While paused, fetch leases nothing (leases already held
-- run and settle as usual; publishes go on); the state is stored, so it survives restarts.
-- KEYS: the queue's keys (lib.lua)
-- ARGV[1] '1' pause, '0' resume
-- Reply: 1 when the state changed, 0 when it already was so. A resume publishes `wake`, so idle
-- consumers look at once.
check_layout(true)
local was = redis.call('HGET', META, 'paused') == '1'
if ARGV[1] == '1' then
  if was then return 0 end
  redis.call('HSET', META, 'paused', '1')
  return 1
end
if not was then return 0 end
redis.call('HDEL', META, 'paused')
local due = first_waiting()
if due then redis.call('PUBLISH', WAKE, fmt_int(due)) end
return 1
