-- nack: give a delivery back, to be delivered again now or after a delay.
-- KEYS: 1 processing list, 2 inflight set, 3 deliveries hash, 4 destination
--       list, 5 timeout set, 6 pending list, 7 channel, 8 dead-letter list
-- ARGV: 1 delivery (8-byte id + value), 2 delay ms (0: back to the
--       destination's tail at once; -1: to its head, first in line again;
--       -2: to the dead-letter list, its delivery count cleared),
--       3 the value packed for the delayed queue
-- Returns 1, or 0 when the delivery was no longer in flight.
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'zset', KEYS[3], 'hash', KEYS[4], 'list', KEYS[5], 'zset', KEYS[6], 'list', KEYS[8], 'list')
if bad then return bad end
local member = ARGV[1]
local value = string.sub(member, 9)
if redis.call('zrem', KEYS[2], member) == 0 then
  return 0
end
redis.call('lrem', KEYS[1], 1, value)
if redis.call('hincrby', KEYS[3], 'c:' .. value, -1) <= 0 then
  redis.call('hdel', KEYS[3], 'c:' .. value)
end
local delay = tonumber(ARGV[2])
local element = ARGV[3]
if delay == -2 then
  redis.call('hdel', KEYS[3], 'd:' .. value)
  redis.call('rpush', KEYS[8], value)
  return 1
end
if delay < 0 then
  redis.call('lpush', KEYS[4], value)
  return 1
end
if delay == 0 or redis.call('zadd', KEYS[5], 'NX', delayq_server_ms() + delay, element) == 0 then
  redis.call('rpush', KEYS[4], value)
  return 1
end
-- Scheduled like an offer: the delivery count is kept, so the next delivery counts on.
redis.call('rpush', KEYS[6], element)
local head = redis.call('zrange', KEYS[5], 0, 0, 'WITHSCORES')
if head[1] == element then
  redis.call('publish', KEYS[7], head[2])
end
return 1
