-- requeue_dead_letters: move dead-lettered values back to the destination's
-- tail. They start over at delivery count 1: a dead-lettered delivery leaves
-- no count record (see claim.lua).
-- KEYS: 1 dead-letter list, 2 destination list, 3 dead-letter reasons,
--       4 request key (lib/request.lua: a resend moves nothing twice)
-- ARGV: 1 how many at most
-- Returns how many moved.
local replayed = delayq_replayed(KEYS[4])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'list')
if bad then return bad end
local values = redis.call('lpop', KEYS[1], tonumber(ARGV[1]))
if not values then
  return delayq_answer(KEYS[4], 0)
end
delayq_call_chunked('rpush', KEYS[2], values)
delayq_dead_trim(KEYS[1], KEYS[3])
return delayq_answer(KEYS[4], #values)
