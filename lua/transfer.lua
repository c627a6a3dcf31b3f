-- transfer: move due elements to the destination list (Redisson's push task).
-- KEYS: 1 destination list, 2 timeout set, 3 pending list, 4 quarantine list
-- ARGV: 1 now_ms (or empty: use the Redis server's clock), 2 limit
-- Returns {moved, quarantined, head_due_ms or nil, now_ms used}.
--
-- Elements move in due order: RPUSH the payload to the destination, remove the
-- element from the pending list and the timeout set. An element neither
-- format can unpack goes to the quarantine list instead, so it cannot stall
-- the queue the way it stalls Redisson's transfer.
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'zset', KEYS[3], 'list', KEYS[4], 'list')
if bad then return bad end
local now = ARGV[1]
if now == '' then
  now = tostring(delayq_server_ms())
end
local due = redis.call('zrangebyscore', KEYS[2], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
local payloads = {}
local quarantined = 0
for i = 1, #due do
  local element = due[i]
  local payload = delayq_payload(element)
  if payload then
    payloads[#payloads + 1] = payload
  else
    redis.call('rpush', KEYS[4], element)
    quarantined = quarantined + 1
  end
  redis.call('lrem', KEYS[3], 1, element)
end
delayq_call_chunked('rpush', KEYS[1], payloads)
delayq_call_chunked('zrem', KEYS[2], due)
local head = redis.call('zrange', KEYS[2], 0, 0, 'WITHSCORES')
return {#payloads, quarantined, head[2] or false, now}
