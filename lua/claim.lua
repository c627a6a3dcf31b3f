-- claim: make a value just moved into the processing list (by BLMOVE) a
-- delivery with a visibility deadline, or dead-letter it.
-- KEYS: 1 processing list, 2 inflight set, 3 deliveries hash, 4 dead-letter
--       list, 5 due-time set (lateness tracking)
-- ARGV: 1 value, 2 delivery id (8 bytes), 3 visibility timeout ms, 4 max deliveries (0: no limit)
-- Returns {'ok', delivery count, due ms or false, now ms} | {'dead', deliveries}
-- | {'gone'} (the reaper already returned this copy to the queue: the caller
-- takes again). The due time is known when a tracked transfer moved the value.
--
-- Identical values are interchangeable: the processing list holds copies,
-- the hash counts per value how many are claimed ('c:') and how often the
-- value was delivered since it was last acknowledged ('d:').
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'zset', KEYS[3], 'hash', KEYS[4], 'list', KEYS[5], 'zset')
if bad then return bad end
local value, id = ARGV[1], ARGV[2]
local copies = #redis.call('lpos', KEYS[1], value, 'COUNT', 0)
local claimed = tonumber(redis.call('hget', KEYS[3], 'c:' .. value) or '0')
if copies <= claimed then
  return {'gone'}
end
local deliveries = redis.call('hincrby', KEYS[3], 'd:' .. value, 1)
local max = tonumber(ARGV[4])
if max > 0 and deliveries > max then
  redis.call('lrem', KEYS[1], -1, value)
  redis.call('rpush', KEYS[4], value)
  redis.call('hdel', KEYS[3], 'd:' .. value)
  if copies - 1 <= claimed then
    redis.call('hdel', KEYS[3], 'u:' .. value)
  end
  return {'dead', deliveries - 1}
end
redis.call('hincrby', KEYS[3], 'c:' .. value, 1)
if copies - 1 <= claimed then
  redis.call('hdel', KEYS[3], 'u:' .. value)
end
local now = delayq_server_ms()
redis.call('zadd', KEYS[2], now + tonumber(ARGV[3]), id .. value)
local due = redis.call('zscore', KEYS[5], value)
if due then
  redis.call('zrem', KEYS[5], value)
end
return {'ok', deliveries, due or false, now}
