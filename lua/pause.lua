-- LIBS: events
-- pause: pause a queue (DelayedQueue::pause): set its pause flag, unless set.
-- KEYS: 1 pause flag, 2 events config, 3 events stream (lib/events.lua:
--       'paused' when this run sets the flag, so a resend writes none)
-- ARGV: 1 ms since the epoch (the flag's value)
-- Returns 1 when it paused the queue, 0 when it was paused already.
-- Harmless to resend: the flag is set once (SET NX).
local events, events_bad = delayq_events_open(KEYS[2], KEYS[3])
if events_bad then return events_bad end
if not redis.call('set', KEYS[1], ARGV[1], 'NX') then
  return 0
end
delayq_event(events, KEYS[3], 'paused')
return 1
