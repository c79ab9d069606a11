-- time.lua: the Redis clock of the node that holds the queue (a query's default "now").
-- KEYS: the queue's keys (lib.lua; they only route the call to that node)
-- ARGV: none
-- Reply: { now_ms, now_us_remainder }
local now, us = clock()
return { now, us }
