-- LIBS: element offer request events
-- resume: end a pause (DelayedQueue::resume).
-- KEYS: 1 pause flag, 2 timeout set, 3 channel, 4 events config, 5 events
--       stream (lib/events.lua: 'resumed' when it ends a pause), 6 request
--       key (a resend returns the first answer and ends no pause set since)
-- Returns 1 when the queue was paused. Publishes the head's due time on the
-- channel, as an offer of a new head does, so that every delayq transfer of
-- the queue wakes and moves what fell due meanwhile, in due order.
local replayed = delayq_replayed(KEYS[6])
if replayed then return replayed end
local events, events_bad = delayq_events_open(KEYS[4], KEYS[5])
if events_bad then return events_bad end
if redis.call('del', KEYS[1]) == 0 then
  return delayq_answer(KEYS[6], 0)
end
delayq_publish_head(KEYS[2], KEYS[3])
delayq_event(events, KEYS[5], 'resumed')
return delayq_answer(KEYS[6], 1)
