-- LIBS: element offer request ids
-- get_id: the pending element with an id and its due time (DelayedQueue::get).
-- KEYS: 1 timeout set, 2 id index
-- ARGV: 1 id
-- Returns {element, due ms} or false. Drops a stale index entry it finds.
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'hash')
if bad then return bad end
local element, score = delayq_id_find(KEYS[2], KEYS[1], ARGV[1])
if not element then
  return false
end
return {element, score}
