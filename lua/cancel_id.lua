-- LIBS: element offer request ids events batches
-- cancel_id: remove the pending element with an id (DelayedQueue::cancel).
-- KEYS: 1 timeout set, 2 pending list, 3 id index, 4 events config, 5 events
--       stream (lib/events.lua: 'cancelled' with the id when it removes),
--       6 batch records, 7 batch outbox, 8 batch expiry (lib/batches.lua: a
--       batch member removed is counted as cancelled), 9 request key
-- ARGV: 1 id
-- Returns 1 when an element was removed, 0 when none with this id was pending.
-- Cost: hash and score lookups, and one removal from the pending list (from
-- the head when the element is among the first 1,000, else from the tail).
local request = KEYS[#KEYS]
local replayed = delayq_replayed(request)
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'list', KEYS[3], 'hash')
if bad then return bad end
local events, events_bad = delayq_events_open(KEYS[4], KEYS[5])
if events_bad then return events_bad end
local element, _, field = delayq_id_find(KEYS[3], KEYS[1], ARGV[1])
if not element then
  return delayq_answer(request, 0)
end
redis.call('zrem', KEYS[1], element)
delayq_pending_remove(KEYS[2], element)
redis.call('hdel', KEYS[3], field)
delayq_event(events, KEYS[5], 'cancelled', 'count', 1, 'id', ARGV[1])
if #KEYS >= 9 then
  delayq_batches_ended(delayq_batches_open(6, events, KEYS[5]), {ARGV[1]}, 'c', delayq_server_ms())
end
return delayq_answer(request, 1)
