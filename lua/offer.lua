-- offer: add packed elements to a delayed queue (Redisson's RDelayedQueue.offer).
-- KEYS: 1 timeout set, 2 pending list, 3 channel
-- ARGV: due_1, element_1, due_2, element_2, ... (packed by the client); a due
--       time is ms since the epoch, or "+delay_ms" from the Redis server's clock
-- Returns the 1-based positions of elements not added because the same packed
-- bytes were already pending (a random-id collision); the client re-packs those.
--
-- Like Redisson: ZADD + RPUSH each element, then publish the due time on the
-- channel when the queue's head is one of the new elements.
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'list')
if bad then return bad end
local new_due = {}
local pushed = {}
local collisions = {}
local server_now
for i = 1, #ARGV, 2 do
  local due, element = ARGV[i], ARGV[i + 1]
  if string.sub(due, 1, 1) == '+' then
    server_now = server_now or delayq_server_ms()
    due = tostring(server_now + tonumber(string.sub(due, 2)))
  end
  if redis.call('zadd', KEYS[1], 'NX', due, element) == 1 then
    pushed[#pushed + 1] = element
    new_due[element] = due
  else
    collisions[#collisions + 1] = (i + 1) / 2
  end
end
delayq_call_chunked('rpush', KEYS[2], pushed)
local head = redis.call('zrange', KEYS[1], 0, 0)[1]
if head ~= nil and new_due[head] ~= nil then
  redis.call('publish', KEYS[3], new_due[head])
end
return collisions
