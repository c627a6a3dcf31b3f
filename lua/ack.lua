-- ack: settle a delivery for good.
-- KEYS: 1 processing list, 2 inflight set, 3 deliveries hash, 4 acked set
-- ARGV: 1 delivery (8-byte id followed by the value)
-- Returns 1 when the delivery is (or already was) acknowledged, 0 when it is
-- too late: its visibility timeout ran out and the value went back to the queue.
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'zset', KEYS[3], 'hash', KEYS[4], 'zset')
if bad then return bad end
local member = ARGV[1]
local id, value = string.sub(member, 1, 8), string.sub(member, 9)
if redis.call('zrem', KEYS[2], member) == 1 then
  redis.call('lrem', KEYS[1], 1, value)
  if redis.call('hincrby', KEYS[3], 'c:' .. value, -1) <= 0 then
    redis.call('hdel', KEYS[3], 'c:' .. value)
  end
  redis.call('hdel', KEYS[3], 'd:' .. value)
  redis.call('zadd', KEYS[4], delayq_server_ms(), id)
  return 1
end
-- A retried ack (its first reply was lost) is still a success.
if redis.call('zscore', KEYS[4], id) then
  return 1
end
return 0
