-- LIBS: element offer request ids jobs
-- job_history: where a job offered with an id is and its last attempts
-- (ReliableQueue::job, DelayedQueue::job; lib/jobs.lua keeps the records).
-- KEYS: 1 timeout set, 2 id index, 3 job records
-- ARGV: 1 id
-- Returns {pending element or false, its due ms or false, the job's record
-- (JSON: lib/jobs.lua's delayq_jobs_json) or false, the queue's history switch: how long handled
-- records are kept (ms), or false when history is off, the ms its cancel was
-- asked or false, its progress (lib/jobs.lua's p:<id>) or false, its result
-- (o:<id>) or false}. Reads only (a stale index entry found on the way is
-- dropped, as get_id does). Cost: three hash lookups and a score lookup.
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'hash', KEYS[3], 'hash')
if bad then return bad end
local element, score = delayq_id_find(KEYS[2], KEYS[1], ARGV[1])
local id = ARGV[1]
local fields = redis.call('hmget', KEYS[3], 'h:' .. id, 'on', 'x:' .. id, 'p:' .. id, 'o:' .. id)
return {element or false, score or false, delayq_jobs_json(fields[1] or nil), fields[2] or false,
  fields[3] or false, fields[4] or false, fields[5] or false}
