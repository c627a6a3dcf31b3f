-- sweep_collect: record which elements are due, for a sweep of a long pending
-- list (see sweep_window.lua).
-- KEYS: 1 timeout set, 2 sweep hash (this client's: element -> score)
-- ARGV: 1 due time bound (ms), 2 offset, 3 count, 4 ttl ms of the sweep hash
-- Returns how many elements were recorded.
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'hash')
if bad then return bad end
local due = redis.call('zrangebyscore', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', tonumber(ARGV[2]), tonumber(ARGV[3]))
delayq_call_chunked('hset', KEYS[2], due)
redis.call('pexpire', KEYS[2], ARGV[4])
return #due / 2
