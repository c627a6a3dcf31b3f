-- poll: remove and return the first pending elements in offer order,
-- without transferring them (RDelayedQueue.poll / poll(limit)).
-- KEYS: 1 pending list, 2 timeout set, 3 quarantine list
-- ARGV: 1 limit
-- Returns {elements, scores, quarantined}: the packed elements (so the
-- client can put them back, scores included, if it cannot decode them).
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'zset', KEYS[3], 'list')
if bad then return bad end
local limit = tonumber(ARGV[1])
local elements = {}
local scores = {}
local quarantined = 0
while #elements < limit do
  local popped = redis.call('lpop', KEYS[1], limit - #elements)
  if not popped then
    break
  end
  for i = 1, #popped do
    local element = popped[i]
    if delayq_payload(element) then
      elements[#elements + 1] = element
      scores[#scores + 1] = redis.call('zscore', KEYS[2], element) or false
    else
      redis.call('rpush', KEYS[3], element)
      quarantined = quarantined + 1
    end
  end
  delayq_call_chunked('zrem', KEYS[2], popped)
end
return {elements, scores, quarantined}
