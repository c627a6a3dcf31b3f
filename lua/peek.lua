-- LIBS: element
-- peek: payload of the first pending element in offer order (RDelayedQueue.peek).
-- KEYS: 1 pending list
-- Returns {payload or nil, malformed elements skipped before it}.
local malformed = 0
local start = 0
while true do
  local chunk = redis.call('lrange', KEYS[1], start, start + 99)
  if #chunk == 0 then
    return {false, malformed}
  end
  for i = 1, #chunk do
    local payload = delayq_payload(chunk[i])
    if payload then
      return {payload, malformed}
    end
    malformed = malformed + 1
  end
  start = start + #chunk
end
