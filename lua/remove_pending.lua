-- remove_pending: remove up to a number of pending elements, first offered
-- first, from both the pending list and the timeout set.
-- KEYS: 1 timeout set, 2 pending list, 3 request key (lib/request.lua: a
--       resend removes nothing twice)
-- ARGV: 1 most elements to remove
-- Returns {removed, still pending}.
--
-- For emptying a large queue in steps that never block Redis for long (DEL
-- of a list of millions does). Elements only in the timeout set (left by a
-- failed writer) go once the pending list is empty.
local replayed = delayq_replayed(KEYS[3])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'list')
if bad then return bad end
local most = tonumber(ARGV[1])
if not most or most < 1 then
  return redis.error_reply('ERR remove_pending needs a count of at least 1')
end
local removed = 0
local popped = redis.call('lpop', KEYS[2], most)
if popped then
  delayq_call_chunked('zrem', KEYS[1], popped)
  removed = #popped
end
if removed < most and redis.call('llen', KEYS[2]) == 0 then
  removed = removed + #redis.call('zpopmin', KEYS[1], most - removed) / 2
end
return delayq_answer(KEYS[3], {removed, redis.call('zcard', KEYS[1])})
