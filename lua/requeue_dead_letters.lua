-- LIBS: element offer request jobs events priority
-- requeue_dead_letters: move dead-lettered values back to the destination's
-- tail. They start over at delivery count 1: a dead-lettered delivery leaves
-- no count record (see claim.lua).
-- KEYS: 1 dead-letter list, 2 destination list, 3 dead-letter reasons,
--       4 job records, 5 job record expiry (lib/jobs.lua: a requeued job,
--       named by its reason record, is ready again), 6 priority ready
--       set, 7 priority marker (lib/priority.lua: a value dead-lettered
--       with headers goes to the ready set's tail at the default level,
--       with them), 8 request key (lib/request.lua: a resend moves
--       nothing twice)
-- ARGV: 1 how many at most
-- Returns how many moved: at most ARGV[1], and no more than about
-- DELAYQ_BATCH_BYTES of payload and reason records (one value at a time, so
-- a run stays short however large the values: 10,000 of 64 KB would be
-- 640 MB in one go; a record holds up to 8 KiB of headers).
-- Cost: the records are read 100 at a time (LRANGE from the list's head).
local replayed = delayq_replayed(KEYS[8])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'list')
if bad then return bad end
bad = delayq_jobs_check(KEYS[4], KEYS[5])
if bad then return bad end
local most, moved, bytes = tonumber(ARGV[1]), 0, 0
-- The reasons list ends where the dead-letter list does: the value at i
-- has its record at i - offset, if any.
local jobbed = delayq_jobs_on(KEYS[4])
bad = delayq_check_types(KEYS[6], 'zset', KEYS[7], 'string')
if bad then return bad end
local offset = redis.call('llen', KEYS[1]) - redis.call('llen', KEYS[3])
-- The records of the values popped, read ahead 100 at a time.
local read, read_from = {}, nil
local function record_of(i)
  local r = i - offset
  if r < 0 then
    return false
  end
  if not read_from or r >= read_from + 100 then
    read_from = r
    read = redis.call('lrange', KEYS[3], r, r + 99)
  end
  return read[r - read_from + 1] or false
end
local records, values = {}, {}
local with_headers, headers = {}, {}
while moved < most and bytes < DELAYQ_BATCH_BYTES do
  local value = redis.call('lpop', KEYS[1])
  if not value then
    break
  end
  local record = record_of(moved)
  local kept = record and delayq_dead_record_headers(record)
  if kept then
    with_headers[#with_headers + 1] = value
    headers[#with_headers] = kept
  else
    redis.call('rpush', KEYS[2], value)
  end
  if jobbed and record then
    records[#records + 1] = record
    values[#values + 1] = value
  end
  moved = moved + 1
  bytes = bytes + #value + (record and #record or 0)
end
delayq_priority_requeue(KEYS[6], KEYS[7], with_headers, headers)
if #records > 0 then
  delayq_jobs_from_dead(KEYS[4], KEYS[5], records, values, delayq_server_ms())
end
if moved > 0 then
  delayq_dead_trim(KEYS[1], KEYS[3])
end
return delayq_answer(KEYS[8], moved)
