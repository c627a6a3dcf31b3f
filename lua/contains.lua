-- LIBS: element
-- contains: how many of the given payloads are pending (RDelayedQueue.contains/containsAll).
-- KEYS: 1 pending list
-- ARGV: payloads (distinct)
-- Returns the number of ARGV payloads found in the pending list.
local wanted = {}
local missing = 0
for i = 1, #ARGV do
  if not wanted[ARGV[i]] then
    wanted[ARGV[i]] = true
    missing = missing + 1
  end
end
local found = 0
local len = redis.call('llen', KEYS[1])
for start = 0, len - 1, 1000 do
  local chunk = redis.call('lrange', KEYS[1], start, start + 999)
  for i = 1, #chunk do
    local payload = delayq_payload(chunk[i])
    if payload and wanted[payload] then
      wanted[payload] = nil
      found = found + 1
      if found == missing then
        return found
      end
    end
  end
end
return found
