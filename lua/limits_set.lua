-- LIBS: element events
-- limits_set: replace a queue's admission limits (DelayedQueue::set_limits;
-- lib/limits.lua says what reads them).
-- KEYS: 1 limits hash, 2 events config, 3 events stream (lib/events.lua:
--       'limits_set' with the limits as text, when they changed)
-- ARGV: 1 the limits as text (for the event), then field, value pairs
--       (none: the queue has no limits, and the hash is deleted)
-- Returns 1 when the limits changed, else 0: a resend finds them set and
-- writes no second event.
local bad = delayq_check_types(KEYS[1], 'hash')
if bad then return bad end
local events, events_bad = delayq_events_open(KEYS[2], KEYS[3])
if events_bad then return events_bad end
local old = redis.call('hgetall', KEYS[1])
local same = #old == #ARGV - 1
if same then
  local want = {}
  for i = 2, #ARGV, 2 do
    want[ARGV[i]] = ARGV[i + 1]
  end
  for i = 1, #old, 2 do
    if want[old[i]] ~= old[i + 1] then
      same = false
    end
  end
end
if same then
  return 0
end
redis.call('del', KEYS[1])
if #ARGV > 1 then
  redis.call('hset', KEYS[1], unpack(ARGV, 2))
end
delayq_event(events, KEYS[3], 'limits_set', 'limits', ARGV[1])
return 1
