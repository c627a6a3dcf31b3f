-- drain: remove and return up to `max` values from the head of a list
-- (RBlockingQueue.drainTo), atomically.
-- KEYS: 1 list
-- ARGV: 1 max (-1 for all)
local max = tonumber(ARGV[1])
local items = redis.call('lrange', KEYS[1], 0, max < 0 and -1 or max - 1)
if #items > 0 then
  redis.call('ltrim', KEYS[1], #items, -1)
end
return items
