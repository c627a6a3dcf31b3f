-- sweep_collect: record which elements are due, for a sweep of a long pending
-- list (see sweep_window.lua).
-- KEYS: 1 timeout set, 2 sweep set (this client's)
-- ARGV: 1 due time bound (ms), 2 offset, 3 count, 4 ttl ms of the sweep set
-- Returns how many elements were recorded.
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'set')
if bad then return bad end
local due = redis.call('zrangebyscore', KEYS[1], '-inf', ARGV[1], 'LIMIT', tonumber(ARGV[2]), tonumber(ARGV[3]))
delayq_call_chunked('sadd', KEYS[2], due)
redis.call('pexpire', KEYS[2], ARGV[4])
return #due
