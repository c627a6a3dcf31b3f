-- LIBS: element offer request
-- drain: remove and return up to `max` values from the head of a list
-- (RBlockingQueue.drainTo), atomically.
-- KEYS: 1 list, 2 request key (lib/request.lua)
-- ARGV: 1 max (>= 1; the client bounds it). No more values once about
--       DELAYQ_BATCH_BYTES of payload are taken (at least one always is).
-- If the client never sees the reply, cancelling the request puts the values
-- back at the head, in order.
local replayed = delayq_replayed(KEYS[2])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'list')
if bad then return bad end
local max, budget = tonumber(ARGV[1]), DELAYQ_BATCH_BYTES
if not max or max < 1 then
  return redis.error_reply('ERR drain needs a count of at least 1')
end
local items, bytes = {}, 0
while #items < max and bytes < budget do
  local chunk = redis.call('lrange', KEYS[1], #items, #items + math.min(100, max - #items) - 1)
  if #chunk == 0 then
    break
  end
  for i = 1, #chunk do
    items[#items + 1] = chunk[i]
    bytes = bytes + #chunk[i]
    if bytes >= budget then
      break
    end
  end
end
if #items == 0 then
  return delayq_answer(KEYS[2], items)
end
redis.call('ltrim', KEYS[1], #items, -1)
return delayq_answer(KEYS[2], items, {'lpush', 1})
