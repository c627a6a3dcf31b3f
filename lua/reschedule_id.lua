-- LIBS: element offer request ids events
-- reschedule_id: give the pending element with an id a new due time
-- (DelayedQueue::reschedule). Its place in the pending list (offer order)
-- stays; the new due time is published when it makes the element the head,
-- as an offer of it would be (lib/offer.lua).
-- KEYS: 1 timeout set, 2 channel, 3 id index, 4 events config, 5 events
--       stream (lib/events.lua: 'rescheduled' with the id and due time when
--       found), 6 request key (a resend returns the first answer, and does
--       not undo a reschedule made since)
-- ARGV: 1 id, 2 due (ms since the epoch, or "+delay_ms" from the server's clock)
-- Returns 1 when the element was found, 0 when none with this id is pending.
local replayed = delayq_replayed(KEYS[6])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[3], 'hash')
if bad then return bad end
local events, events_bad = delayq_events_open(KEYS[4], KEYS[5])
if events_bad then return events_bad end
local due = delayq_due(ARGV[2])
local element = delayq_id_find(KEYS[3], KEYS[1], ARGV[1])
if not element then
  return delayq_answer(KEYS[6], 0)
end
redis.call('zadd', KEYS[1], 'XX', due, element)
delayq_publish_new_head(KEYS[1], KEYS[2], {[element] = due})
delayq_event(events, KEYS[5], 'rescheduled', 'id', ARGV[1], 'due_ms', due)
return delayq_answer(KEYS[6], 1)
