-- LIBS: element offer request ids
-- poll: remove and return the first pending elements in offer order,
-- without transferring them (RDelayedQueue.poll / poll(limit)).
-- KEYS: 1 pending list, 2 timeout set, 3 quarantine list, 4 channel,
--       5 id index, 6 request key (lib/request.lua)
-- ARGV: 1 limit (>= 1; the client bounds it). No more elements once about
--       DELAYQ_BATCH_BYTES are taken (at least one always is).
-- Returns {elements, scores, quarantined, ids}: the packed elements, and
-- the ids of those offered with one (false: none), so that the client can
-- put them back, scores and ids included, if it cannot decode them
-- (lua/restore.lua). If the client never sees the reply, cancelling the
-- request puts them back the same way.
local replayed = delayq_replayed(KEYS[6])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'zset', KEYS[3], 'list', KEYS[5], 'hash')
if bad then return bad end
local limit, budget = tonumber(ARGV[1]), DELAYQ_BATCH_BYTES
if not limit or limit < 1 then
  return redis.error_reply('ERR poll needs a limit of at least 1')
end
local elements = {}
local scores = {}
local quarantined = 0
local bytes, popped_count = 0, 0
-- Malformed elements count towards the bounds too: a long run of them is
-- quarantined over several calls.
while #elements < limit and bytes < budget and popped_count < limit + 1000 do
  local popped = redis.call('lpop', KEYS[1], delayq_next_chunk(limit - #elements, popped_count, bytes, budget, 100))
  if not popped then
    break
  end
  popped_count = popped_count + #popped
  for i = 1, #popped do
    local element = popped[i]
    bytes = bytes + #element
    if delayq_payload(element) then
      elements[#elements + 1] = element
      scores[#scores + 1] = redis.call('zscore', KEYS[2], element) or false
    else
      redis.call('rpush', KEYS[3], element)
      quarantined = quarantined + 1
    end
  end
  delayq_call_chunked('zrem', KEYS[2], popped)
end
local undo
if #elements > 0 then
  undo = {'restore', 1, 2, 4, false, false, 5}
end
local taken = delayq_ids_take(KEYS[5], elements)
return delayq_answer(KEYS[6], {elements, scores, quarantined, taken}, undo)
