-- flag.lua: set or clear a queue's flag in META, stored so that it holds for every client and
-- survives restarts:
--   'paused'  fetch leases nothing (leases already held run and settle as usual; publishes go
--             on); clearing it publishes `wake`, so idle consumers look at once
--   'nohist'  the scripts keep no history counters
-- KEYS: the queue's keys (lib.lua)
-- ARGV[1] the flag, ARGV[2] '1' set, '0' clear, ARGV[3] for a shard of a sharded queue the
--   queue's shard count, which the shard's META must carry as its mark `of` ('0' for a plain
--   queue: lib.lua check_layout)
-- Reply: 1 when the flag changed, 0 when it already was so; an error 'redelay: shard not
-- marked' when the shard does not carry the mark ARGV[3] (nothing written)
check_layout(true, ARGV[3])
local flag, on = ARGV[1], ARGV[2] == '1'
if flag ~= 'paused' and flag ~= 'nohist' then return redis.error_reply('redelay: unknown flag ' .. flag) end
local was = redis.call('HGET', META, flag) == '1'
if was == on then return 0 end
if on then
  redis.call('HSET', META, flag, '1')
else
  redis.call('HDEL', META, flag)
  if flag == 'paused' then
    local due = first_waiting()
    if due then redis.call('PUBLISH', WAKE, fmt_int(due)) end
  end
end
return 1
