-- LIBS: element offer request ids
-- remove_pending: remove up to a number of pending elements, first offered
-- first, from both the pending list and the timeout set.
-- KEYS: 1 timeout set, 2 pending list, 3 channel, 4 id index, 5 request key
--       (lib/request.lua: a resend removes nothing twice, and a request the
--       client gave up on puts its elements back)
-- ARGV: 1 most elements to remove (>= 1). No more once about
--       DELAYQ_BATCH_BYTES are removed (at least one always is).
-- Returns {removed, still pending}.
--
-- For emptying a large queue in steps that never block Redis for long (DEL
-- of a list of millions does). Elements only in the timeout set (left by a
-- failed writer) go once the pending list is empty.
local replayed = delayq_replayed(KEYS[5])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'list', KEYS[4], 'hash')
if bad then return bad end
local most, budget = tonumber(ARGV[1]), DELAYQ_BATCH_BYTES
if not most or most < 1 then
  return redis.error_reply('ERR remove_pending needs a count of at least 1')
end
local elements, scores = {}, {}
local bytes = 0
while #elements < most and bytes < budget do
  local popped = redis.call('lpop', KEYS[2], delayq_next_chunk(most - #elements, #elements, bytes, budget, 100))
  if not popped then
    break
  end
  local found = redis.call('zmscore', KEYS[1], unpack(popped))
  for i = 1, #popped do
    elements[#elements + 1] = popped[i]
    scores[#scores + 1] = found[i] or false
    bytes = bytes + #popped[i]
  end
  redis.call('zrem', KEYS[1], unpack(popped))
end
-- Only in the timeout set: they go back to both keys if undone, as the
-- pending list is where a transfer looks for them anyway.
if #elements < most and bytes < budget and redis.call('llen', KEYS[2]) == 0 then
  local orphans = redis.call('zpopmin', KEYS[1], most - #elements)
  for i = 1, #orphans, 2 do
    elements[#elements + 1] = orphans[i]
    scores[#scores + 1] = orphans[i + 1]
  end
end
local undo
if #elements > 0 then
  -- Their ids go with them: an undone purge gives them back indexed.
  undo = {'restore', 2, 1, 3, elements, scores, 4, delayq_ids_take(KEYS[4], elements)}
end
return delayq_answer(KEYS[5], {#elements, redis.call('zcard', KEYS[1])}, undo)
