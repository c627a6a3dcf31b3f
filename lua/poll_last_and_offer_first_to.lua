-- LIBS: element offer request
-- poll_last_and_offer_first_to: move the last pending element's payload to the
-- head of another list (RDelayedQueue.pollLastAndOfferFirstTo).
-- KEYS: 1 pending list, 2 timeout set, 3 quarantine list, 4 target list,
--       5 request key (lib/request.lua: a resend moves nothing twice)
-- Returns {payload or nil, quarantined}. A reply the client never sees
-- loses nothing: the value is in the target list.
local replayed = delayq_replayed(KEYS[5])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'zset', KEYS[3], 'list', KEYS[4], 'list')
if bad then return bad end
local quarantined = 0
while true do
  local element = redis.call('rpop', KEYS[1])
  if not element then
    return delayq_answer(KEYS[5], {false, quarantined})
  end
  redis.call('zrem', KEYS[2], element)
  local payload = delayq_payload(element)
  if payload then
    redis.call('lpush', KEYS[4], payload)
    return delayq_answer(KEYS[5], {payload, quarantined})
  end
  redis.call('rpush', KEYS[3], element)
  quarantined = quarantined + 1
end
