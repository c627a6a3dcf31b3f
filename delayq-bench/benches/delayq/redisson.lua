-- The transfer as Redisson runs it (written here from the wire contract,
-- ../shared/WIRE.md): the baseline of the backlog and lateness scenarios.
-- KEYS: 1 destination, 2 timeout set, 3 pending list; ARGV: 1 now, 2 limit
local expired = redis.call('zrangebyscore', KEYS[2], 0, ARGV[1], 'limit', 0, ARGV[2])
if #expired > 0 then
  for _, element in ipairs(expired) do
    local id, value = struct.unpack('Bc0Lc0', element)
    redis.call('rpush', KEYS[1], value)
    redis.call('lrem', KEYS[3], 1, element)
  end
  redis.call('zrem', KEYS[2], unpack(expired))
end
local head = redis.call('zrange', KEYS[2], 0, 0, 'WITHSCORES')
if head[1] ~= nil then
  return head[2]
end
return nil
