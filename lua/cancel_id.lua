-- LIBS: element offer request ids events
-- cancel_id: remove the pending element with an id (DelayedQueue::cancel).
-- KEYS: 1 timeout set, 2 pending list, 3 id index, 4 events config, 5 events
--       stream (lib/events.lua: 'cancelled' with the id when it removes),
--       6 request key
-- ARGV: 1 id
-- Returns 1 when an element was removed, 0 when none with this id was pending.
-- Cost: hash and score lookups, and one removal from the pending list (from
-- the head when the element is among the first 1,000, else from the tail).
local replayed = delayq_replayed(KEYS[6])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'list', KEYS[3], 'hash')
if bad then return bad end
local events, events_bad = delayq_events_open(KEYS[4], KEYS[5])
if events_bad then return events_bad end
local element, _, field = delayq_id_find(KEYS[3], KEYS[1], ARGV[1])
if not element then
  return delayq_answer(KEYS[6], 0)
end
redis.call('zrem', KEYS[1], element)
delayq_pending_remove(KEYS[2], element)
redis.call('hdel', KEYS[3], field)
delayq_event(events, KEYS[5], 'cancelled', 'count', 1, 'id', ARGV[1])
return delayq_answer(KEYS[6], 1)
