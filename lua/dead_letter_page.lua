-- dead_letter_page: dead letters from an index, oldest first, each with the
-- reason recorded for it (ReliableQueue::dead_letter_page).
-- KEYS: 1 dead-letter list, 2 dead-letter reasons (aligned with its tail)
-- ARGV: 1 start index, 2 count
-- Returns {value, reason or false, value, ...}; reads only, O(start + count).
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
local out = {}
for i = 1, #values do
  local at = first + i - 1
  out[#out + 1] = values[i]
  if at >= 0 then
    out[#out + 1] = reasons[at - math.max(first, 0) + 1] or false
  else
    out[#out + 1] = false
  end
end
return out
