-- LIBS: element
-- read_all: payloads of all pending elements in offer order (RDelayedQueue.readAll).
-- KEYS: 1 pending list
-- Returns {payloads, malformed_count}; malformed elements are skipped, not touched.
local elements = redis.call('lrange', KEYS[1], 0, -1)
local payloads = {}
local malformed = 0
for i = 1, #elements do
  local payload = delayq_payload(elements[i])
  if payload then
    payloads[#payloads + 1] = payload
  else
    malformed = malformed + 1
  end
end
return {payloads, malformed}
