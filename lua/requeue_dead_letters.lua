-- LIBS: element offer request jobs
-- requeue_dead_letters: move dead-lettered values back to the destination's
-- tail. They start over at delivery count 1: a dead-lettered delivery leaves
-- no count record (see claim.lua).
-- KEYS: 1 dead-letter list, 2 destination list, 3 dead-letter reasons,
--       4 job records, 5 job record expiry (lib/jobs.lua: a requeued job,
--       named by its reason record, is ready again), 6 request key
--       (lib/request.lua: a resend moves nothing twice)
-- ARGV: 1 how many at most
-- Returns how many moved: at most ARGV[1], and no more than about
-- DELAYQ_BATCH_BYTES of payload (one value at a time, so a run stays short
-- however large the values: 10,000 of 64 KB would be 640 MB in one go).
local replayed = delayq_replayed(KEYS[6])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'list')
if bad then return bad end
bad = delayq_jobs_check(KEYS[4], KEYS[5])
if bad then return bad end
local most, moved, bytes = tonumber(ARGV[1]), 0, 0
-- The reasons list ends where the dead-letter list does: the value at i
-- has its record at i - offset, if any.
local jobbed = delayq_jobs_on(KEYS[4])
local offset = jobbed and redis.call('llen', KEYS[1]) - redis.call('llen', KEYS[3])
local records, values = {}, {}
while moved < most and bytes < DELAYQ_BATCH_BYTES do
  local value = redis.call('lpop', KEYS[1])
  if not value then
    break
  end
  redis.call('rpush', KEYS[2], value)
  if jobbed and moved - offset >= 0 then
    records[#records + 1] = redis.call('lindex', KEYS[3], moved - offset) or ''
    values[#values + 1] = value
  end
  moved = moved + 1
  bytes = bytes + #value
end
if #records > 0 then
  delayq_jobs_from_dead(KEYS[4], KEYS[5], records, values, delayq_server_ms())
end
if moved > 0 then
  delayq_dead_trim(KEYS[1], KEYS[3])
end
return delayq_answer(KEYS[6], moved)
