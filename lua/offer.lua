-- LIBS: element offer events limits traces
-- offer: add packed elements to a delayed queue (Redisson's RDelayedQueue.offer).
-- KEYS: 1 timeout set, 2 pending list, 3 channel, 4 events config, 5 events
--       stream (lib/events.lua: one 'offered' event per run, with its count,
--       or one 'refused'), 6 stats hash (the 'offered' total; a refused run
--       counts none), 7 limits hash (lib/limits.lua), 8 destination list
--       (counted by 'max_size'); only with a trace context (feature
--       `opentelemetry`): 9 trace records, 10 trace expiry
-- ARGV: due_1, element_1, due_2, element_2, ... (packed by the client); a due
--       time is ms since the epoch, or "+delay_ms" from the Redis server's
--       clock; then, only with KEYS 9 and 10, the W3C trace context of the
--       offer, stored for each element added (lib/traces.lua)
-- A run the queue's limits do not admit whole adds nothing and answers the
-- first refusal (lib/limits.lua): the client sends joined offers alone then,
-- so that each gets the answer it would have got alone.
-- Returns the 1-based positions of elements not added because the same packed
-- bytes were already pending (a random-id collision); the client re-packs those.
--
-- Like Redisson: ZADD + RPUSH each element, then publish the due time on the
-- channel when the queue's head is one of the new elements (lib/offer.lua).
local trace = KEYS[10] and table.remove(ARGV)
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'list')
if bad then return bad end
local events, events_bad = delayq_events_open(KEYS[4], KEYS[5])
if events_bad then return events_bad end
bad = trace and delayq_check_types(KEYS[9], 'hash', KEYS[10], 'zset')
if bad then return bad end
local limits, limits_bad = delayq_limits_open(KEYS[7])
if limits_bad then return limits_bad end
local dues, elements = {}, {}
for i = 1, #ARGV, 2 do
  dues[#dues + 1] = delayq_due(ARGV[i])
  elements[#elements + 1] = ARGV[i + 1]
end
local admitted, refusal = delayq_admit(limits, KEYS[1], KEYS[8], elements)
if admitted < #elements then
  delayq_event(events, KEYS[5], 'refused', 'count', #elements, 'reason', delayq_refusal_reason(refusal))
  return redis.error_reply(refusal)
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
  delayq_traces_put_elements(KEYS[9], KEYS[10], trace, elements, dues)
end
return collisions
