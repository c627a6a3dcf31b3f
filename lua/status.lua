-- LIBS: element
-- status: how many elements a queue holds where, read in one atomic step.
-- KEYS: 1 timeout set, 2 pending list, 3 destination list, 4 lease set (delayq_leases),
--       5 dead-letter list, 6 quarantine list, 7 pause flag, 8 id index,
--       9 due-time set (lateness tracking), 10 stats hash (lib/events.lua),
--       11 priority ready set, 12 priority delayed set (lib/priority.lua),
--       13 limits hash (lib/limits.lua: its concurrency limit; optional),
--       14 group values, 15 group delayed (lib/groups.lua; optional)
-- Returns {pending, ready, in flight, dead letters, quarantined, head due ms
-- or false, keys that exist, paused (0/1), id index entries, the oldest
-- ready value's due ms or false, the pause flag (ms paused at) or false,
-- the totals {offered, transferred, acked, failed, dead_lettered, timed_out,
-- duplicate, expired}
-- (false for a field never counted), or false when the stats key holds
-- something else, the priority values ready, those delayed, and when the
-- first delayed one is due (ms) or false, the concurrency limit or false,
-- and the deliveries past their visibility timeout (lapsed: a reaper has
-- not returned them yet; the concurrency limit does not count them), the
-- grouped values ready and those delayed}.
-- The oldest ready value's due time is known only when a transfer recorded
-- it in the due-time set (tracking on); one offered straight to the
-- destination, or moved while tracking was off, has none (false).
-- Cost: O(log n), whatever the queue's size.
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'list', KEYS[3], 'list', KEYS[4], 'zset', KEYS[5], 'list', KEYS[6], 'list', KEYS[9], 'zset', KEYS[11], 'zset', KEYS[12], 'zset')
if bad then return bad end
local head = redis.call('zrange', KEYS[1], 0, 0, 'WITHSCORES')
local oldest = redis.call('lindex', KEYS[3], 0)
local oldest_due = oldest and redis.call('zscore', KEYS[9], oldest) or false
local totals = redis.pcall('hmget', KEYS[10], 'offered', 'transferred', 'acked', 'failed', 'dead_lettered', 'timed_out', 'duplicate', 'expired', 'cancelled')
if totals.err then totals = false end
local priority_head = redis.call('zrange', KEYS[12], 0, 0, 'WITHSCORES')
-- A limits key of another type reads as no limit: the status still answers.
local concurrency = KEYS[13] and redis.pcall('hget', KEYS[13], 'concurrency')
if type(concurrency) ~= 'string' then concurrency = false end
return {
  redis.call('zcard', KEYS[1]),
  redis.call('llen', KEYS[3]),
  redis.call('zcard', KEYS[4]),
  redis.call('llen', KEYS[5]),
  redis.call('llen', KEYS[6]),
  head[2] or false,
  redis.call('exists', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[11], KEYS[12])
    + (KEYS[15] and redis.call('exists', KEYS[14], KEYS[15]) or 0),
  redis.call('exists', KEYS[7]),
  redis.call('hlen', KEYS[8]) - redis.call('hexists', KEYS[8], 'cursor'),
  oldest_due,
  redis.call('get', KEYS[7]),
  totals,
  redis.call('zcard', KEYS[11]),
  redis.call('zcard', KEYS[12]),
  priority_head[2] or false,
  concurrency,
  redis.call('zcount', KEYS[4], '-inf', delayq_server_ms()),
  KEYS[14] and redis.call('zcard', KEYS[14]) or 0,
  KEYS[15] and redis.call('zcard', KEYS[15]) or 0,
}
