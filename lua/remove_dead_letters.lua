-- LIBS: element
-- remove_dead_letters: delete the oldest dead letters and their reasons
-- (ReliableQueue::remove_dead_letters; the dashboard's delete).
-- KEYS: 1 dead-letter list, 2 dead-letter reasons
-- ARGV: 1 how many at most
-- Returns how many were deleted. LTRIM, not LPOP n: the values are never
-- copied into the script, whatever their size.
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'list')
if bad then return bad end
local removed = math.min(redis.call('llen', KEYS[1]), tonumber(ARGV[1]))
if removed == 0 then
  return 0
end
redis.call('ltrim', KEYS[1], removed, -1)
delayq_dead_trim(KEYS[1], KEYS[2])
return removed
