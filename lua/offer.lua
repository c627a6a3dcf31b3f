-- LIBS: element offer events traces
-- offer: add packed elements to a delayed queue (Redisson's RDelayedQueue.offer).
-- KEYS: 1 timeout set, 2 pending list, 3 channel, 4 events config, 5 events
--       stream (lib/events.lua: one 'offered' event per run, with its count),
--       6 stats hash (the 'offered' total); only with a trace context
--       (feature `opentelemetry`): 7 trace records, 8 trace expiry
-- ARGV: due_1, element_1, due_2, element_2, ... (packed by the client); a due
--       time is ms since the epoch, or "+delay_ms" from the Redis server's
--       clock; then, only with KEYS 7 and 8, the W3C trace context of the
--       offer, stored for each element added (lib/traces.lua)
-- Returns the 1-based positions of elements not added because the same packed
-- bytes were already pending (a random-id collision); the client re-packs those.
--
-- Like Redisson: ZADD + RPUSH each element, then publish the due time on the
-- channel when the queue's head is one of the new elements (lib/offer.lua).
local trace = KEYS[8] and table.remove(ARGV)
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'list')
if bad then return bad end
local events, events_bad = delayq_events_open(KEYS[4], KEYS[5])
if events_bad then return events_bad end
bad = trace and delayq_check_types(KEYS[7], 'hash', KEYS[8], 'zset')
if bad then return bad end
local dues, elements = {}, {}
for i = 1, #ARGV, 2 do
  dues[#dues + 1] = delayq_due(ARGV[i])
  elements[#elements + 1] = ARGV[i + 1]
end
local collisions = delayq_collisions(KEYS[1], elements)
if #collisions > 0 then
  local kept_dues, kept = {}, {}
  local next_collision = 1
  for i = 1, #elements do
    if collisions[next_collision] == i then
      next_collision = next_collision + 1
    else
      kept_dues[#kept_dues + 1], kept[#kept + 1] = dues[i], elements[i]
    end
  end
  dues, elements = kept_dues, kept
end
delayq_offer(KEYS[1], KEYS[2], KEYS[3], dues, elements)
if #elements > 0 then delayq_event(events, KEYS[5], 'offered', 'count', #elements) end
delayq_count(KEYS[6], 'offered', #elements)
if trace then
  delayq_traces_put_elements(KEYS[7], KEYS[8], trace, elements, dues)
end
return collisions
