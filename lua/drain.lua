-- drain: remove and return up to `max` values from the head of a list
-- (RBlockingQueue.drainTo), atomically.
-- KEYS: 1 list, 2 request key (lib/request.lua)
-- ARGV: 1 max (>= 1; the client bounds it)
-- If the client never sees the reply, cancelling the request puts the values
-- back at the head, in order.
local replayed = delayq_replayed(KEYS[2])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'list')
if bad then return bad end
local max = tonumber(ARGV[1])
if not max or max < 1 then
  return redis.error_reply('ERR drain needs a count of at least 1')
end
local items = redis.call('lrange', KEYS[1], 0, max - 1)
if #items == 0 then
  return delayq_answer(KEYS[2], items)
end
redis.call('ltrim', KEYS[1], #items, -1)
local back = {}
for i = #items, 1, -1 do
  back[#back + 1] = items[i]
end
return delayq_answer(KEYS[2], items, {{'lpush', 1, back}})
