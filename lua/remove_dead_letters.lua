-- LIBS: element jobs
-- remove_dead_letters: delete the oldest dead letters and their reasons
-- (ReliableQueue::remove_dead_letters; the dashboard's delete).
-- KEYS: 1 dead-letter list, 2 dead-letter reasons, 3 job records, 4 job
--       record expiry (lib/jobs.lua: a deleted job's history says so, and
--       expires)
-- ARGV: 1 how many at most
-- Returns how many were deleted. LTRIM, not LPOP n: the values are never
-- copied into the script, whatever their size; their reason records are,
-- when there are job records (at most 10,000 small records a call: the
-- client asks for no more).
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'list')
if bad then return bad end
bad = delayq_jobs_check(KEYS[3], KEYS[4])
if bad then return bad end
local removed = math.min(redis.call('llen', KEYS[1]), tonumber(ARGV[1]))
if removed == 0 then
  return 0
end
if delayq_jobs_on(KEYS[3]) then
  local offset = redis.call('llen', KEYS[1]) - redis.call('llen', KEYS[2])
  if removed - offset > 0 then
    delayq_jobs_from_dead(KEYS[3], KEYS[4], redis.call('lrange', KEYS[2], 0, removed - offset - 1), nil, delayq_server_ms())
  end
end
redis.call('ltrim', KEYS[1], removed, -1)
delayq_dead_trim(KEYS[1], KEYS[2])
return removed
