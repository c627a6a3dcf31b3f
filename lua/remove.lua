-- LIBS: element offer request events
-- remove: delete pending elements by payload (RDelayedQueue.remove/removeAll/retainAll).
-- KEYS: 1 pending list, 2 timeout set, 3 events config, 4 events stream
--       (lib/events.lua: one 'cancelled' event with the count, when it
--       removes any), 5 request key (lib/request.lua: a resend removes
--       nothing twice)
-- ARGV: 1 mode: 'first' (the first element whose payload is in the set),
--               'all' (every such element) or 'retain' (every element whose
--               payload is not in the set; malformed elements are kept),
--       2.. payloads
-- Returns the number of elements removed.
local replayed = delayq_replayed(KEYS[5])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'zset')
if bad then return bad end
local events, events_bad = delayq_events_open(KEYS[3], KEYS[4])
if events_bad then return events_bad end
local mode = ARGV[1]
local set = {}
for i = 2, #ARGV do
  set[ARGV[i]] = true
end
local elements = redis.call('lrange', KEYS[1], 0, -1)
local indices = {}
local removed = {}
for i = 1, #elements do
  local payload = delayq_payload(elements[i])
  local hit
  if mode == 'retain' then
    hit = payload ~= nil and not set[payload]
  else
    hit = payload ~= nil and set[payload] == true
  end
  if hit then
    indices[#indices + 1] = i - 1
    removed[#removed + 1] = elements[i]
    if mode == 'first' then
      break
    end
  end
end
delayq_remove_indices(KEYS[1], indices)
delayq_call_chunked('zrem', KEYS[2], removed)
if #removed > 0 then delayq_event(events, KEYS[4], 'cancelled', 'count', #removed) end
return delayq_answer(KEYS[5], #removed)
