-- reap: return to the queue what reliable consumers took but did not settle.
-- KEYS: 1 processing list, 2 inflight set, 3 deliveries hash, 4 destination list, 5 acked set
-- ARGV: 1 grace ms for values moved but never claimed, 2 how long acked ids are remembered (ms)
-- Returns {deliveries timed out, unclaimed copies returned}.
--
-- A delivery whose deadline passed goes back to the head of the destination
-- (it was first in line); its delivery count is kept. A copy in the
-- processing list that no delivery claims (its consumer died between BLMOVE
-- and claim) goes back once it has been seen unclaimed for the grace period.
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'zset', KEYS[3], 'hash', KEYS[4], 'list', KEYS[5], 'zset')
if bad then return bad end
local now = delayq_server_ms()
local expired = redis.call('zrangebyscore', KEYS[2], '-inf', now, 'LIMIT', 0, 1000)
for i = 1, #expired do
  local value = string.sub(expired[i], 9)
  redis.call('zrem', KEYS[2], expired[i])
  redis.call('lrem', KEYS[1], 1, value)
  if redis.call('hincrby', KEYS[3], 'c:' .. value, -1) <= 0 then
    redis.call('hdel', KEYS[3], 'c:' .. value)
  end
  redis.call('lpush', KEYS[4], value)
end
local copies = {}
local items = redis.call('lrange', KEYS[1], 0, -1)
for i = 1, #items do
  copies[items[i]] = (copies[items[i]] or 0) + 1
end
local returned = 0
local grace = tonumber(ARGV[1])
for value, n in pairs(copies) do
  local unclaimed = n - tonumber(redis.call('hget', KEYS[3], 'c:' .. value) or '0')
  if unclaimed > 0 then
    local since = redis.call('hget', KEYS[3], 'u:' .. value)
    if not since then
      redis.call('hset', KEYS[3], 'u:' .. value, now)
    elseif now - tonumber(since) >= grace then
      redis.call('lrem', KEYS[1], unclaimed, value)
      for _ = 1, unclaimed do
        redis.call('lpush', KEYS[4], value)
      end
      redis.call('hdel', KEYS[3], 'u:' .. value)
      returned = returned + unclaimed
    end
  else
    redis.call('hdel', KEYS[3], 'u:' .. value)
  end
end
redis.call('zremrangebyscore', KEYS[5], '-inf', now - tonumber(ARGV[2]))
return {#expired, returned}
