-- poll: remove and return the first pending elements in offer order,
-- without transferring them (RDelayedQueue.poll / poll(limit)).
-- KEYS: 1 pending list, 2 timeout set, 3 quarantine list
-- ARGV: 1 limit
-- Returns {payloads, quarantined}.
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'zset', KEYS[3], 'list')
if bad then return bad end
local limit = tonumber(ARGV[1])
local payloads = {}
local quarantined = 0
while #payloads < limit do
  local popped = redis.call('lpop', KEYS[1], limit - #payloads)
  if not popped then
    break
  end
  for i = 1, #popped do
    local element = popped[i]
    local payload = delayq_payload(element)
    if payload then
      payloads[#payloads + 1] = payload
    else
      redis.call('rpush', KEYS[3], element)
      quarantined = quarantined + 1
    end
  end
  delayq_call_chunked('zrem', KEYS[2], popped)
end
return {payloads, quarantined}
