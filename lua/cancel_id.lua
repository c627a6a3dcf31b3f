-- cancel_id: remove the pending element with an id (DelayedQueue::cancel).
-- KEYS: 1 timeout set, 2 pending list, 3 id index, 4 request key
-- ARGV: 1 id
-- Returns 1 when an element was removed, 0 when none with this id was pending.
-- Cost: hash and score lookups, and one removal from the pending list (from
-- the head when the element is among the first 1,000, else from the tail).
local replayed = delayq_replayed(KEYS[4])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'list', KEYS[3], 'hash')
if bad then return bad end
local element, _, field = delayq_id_find(KEYS[3], KEYS[1], ARGV[1])
if not element then
  return delayq_answer(KEYS[4], 0)
end
redis.call('zrem', KEYS[1], element)
delayq_pending_remove(KEYS[2], element)
redis.call('hdel', KEYS[3], field)
return delayq_answer(KEYS[4], 1)
