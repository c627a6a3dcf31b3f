-- LIBS: element offer request events schedules
-- schedule_run: offer a schedule's value once, now, by hand ("run now"),
-- leaving its next occurrence, paused state and counts as they are.
-- KEYS: 1 schedules hash, 2 schedule fires (lib/schedules.lua: the run is
--       recorded as one 'by_hand' fire), 3 timeout set, 4 pending list,
--       5 channel, 6 events config, 7 events stream (one 'schedule_run'
--       event), 8 stats hash (lib/events.lua: the 'offered' total), 9 request
--       key (lib/request.lua: a resend returns the first
--       run's answer and offers nothing again)
-- ARGV: 1 name, 2 rev the caller read, 3 the element (the stored value,
--       packed by the client in the stored format), 4 the caller's id, 5 its
--       host
-- Returns {'ran', due_ms} | {'gone'} | {'stale'} (another definition was
-- saved since the caller read it: read again) | {'collision'} (the
-- element's random id is pending already: pack again).
--
-- A paused schedule runs too: a pause stops the runners, not an operator.
-- Cost: one record, one offer, one history entry.
local replayed = delayq_replayed(KEYS[9])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'hash', KEYS[2], 'hash', KEYS[3], 'zset', KEYS[4], 'list')
if bad then return bad end
local events, events_bad = delayq_events_open(KEYS[6], KEYS[7])
if events_bad then return events_bad end
local raw = redis.call('hget', KEYS[1], ARGV[1])
if not raw then
  return delayq_answer(KEYS[9], {'gone'})
end
if cjson.decode(raw).rev ~= ARGV[2] then
  return delayq_answer(KEYS[9], {'stale'})
end
if redis.call('zscore', KEYS[3], ARGV[3]) then
  return delayq_answer(KEYS[9], {'collision'})
end
local now = string.format('%d', delayq_server_ms())
delayq_offer(KEYS[3], KEYS[4], KEYS[5], {now}, {ARGV[3]})
delayq_record_fire(KEYS[2], ARGV[1], {
  due = now, at = now, n = 1, missed = 0, kind = 'by_hand', by = ARGV[4], host = ARGV[5],
})
delayq_event(events, KEYS[7], 'schedule_run', 'schedule', ARGV[1])
delayq_count(KEYS[8], 'offered', 1)
return delayq_answer(KEYS[9], {'ran', now})
