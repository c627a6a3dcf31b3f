-- LIBS: element
-- dead_letter_page: dead letters from an index, oldest first, each with the
-- reason recorded for it and a digest naming it exactly
-- (ReliableQueue::dead_letter_page; lua/dead_letter_act.lua finds a value
-- again by this digest).
-- KEYS: 1 dead-letter list, 2 dead-letter reasons (aligned with its tail)
-- ARGV: 1 start index, 2 count
-- Returns {value, reason or false, digest, value, ...}; reads only,
-- O(start + count) and about DELAYQ_BATCH_BYTES of values: it stops after
-- the value that passes that many bytes (at least one value), and then
-- ends the reply with one more element, 1, meaning "read on from here"
-- (hashing 100 values of 64 KB in one run would hold Redis for all 6.4 MB).
-- The digest that names a dead letter: its bytes and its reason record (which
-- holds the ms it died), so equal payloads dead-lettered apart differ.
-- lua/dead_letter_act.lua computes it the same way.
local function dead_digest(value, reason)
  return redis.sha1hex(value .. '\n' .. (reason or ''))
end

local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'list')
if bad then return bad end
local start, count = tonumber(ARGV[1]), tonumber(ARGV[2])
local values = redis.call('lrange', KEYS[1], start, start + count - 1)
-- Values dead-lettered before reasons were recorded have none, at the head.
local offset = redis.call('llen', KEYS[1]) - redis.call('llen', KEYS[2])
local reasons = {}
local first = start - offset
if #values > 0 and first + #values > 0 then
  reasons = redis.call('lrange', KEYS[2], math.max(first, 0), first + #values - 1)
end
local out, bytes = {}, 0
for i = 1, #values do
  if bytes >= DELAYQ_BATCH_BYTES then
    out[#out + 1] = 1
    return out
  end
  bytes = bytes + #values[i]
  local at = first + i - 1
  local reason = false
  if at >= 0 then
    reason = reasons[at - math.max(first, 0) + 1] or false
  end
  out[#out + 1] = values[i]
  out[#out + 1] = reason
  out[#out + 1] = dead_digest(values[i], reason)
end
return out
