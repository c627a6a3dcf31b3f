-- LIBS: element counts jobs events batches limits
-- claim: turn a value just moved into the staging list (by LMOVE on the
-- shared connections when one was ready, else by BLMOVE on a dedicated one)
-- into a delivery with a visibility deadline, or dead-letter it.
-- KEYS: 1 staging list, 2 lease set (delayq_leases), 3 dead-letter list, 4 due-time set
--       (lateness tracking), 5 count records (hash), 6 count record expiry
--       (zset), 7 staging mark (hash), 8 destination list, 9 pause flag,
--       10 dead-letter reasons (list), 11 events config, 12 events stream
--       (lib/events.lua: 'claimed' or 'dead_lettered', with the job id
--       when the value has one), 13 stats hash (the 'dead_lettered' and 'cancelled' totals),
--       14 limits hash (lib/limits.lua: takes switched off hold the queue as
--       a pause does; at the concurrency limit the value goes back as on a
--       pause, answered 'full'), 15 job records, 16 job record expiry (lib/jobs.lua:
--       the value's job, if any, starts an attempt), 17 batch records, 18
--       batch outbox, 19 batch expiry (lib/batches.lua: a member job
--       dead-lettered or dropped as cancelled is counted; optional)
-- ARGV: 1 value, 2 delivery id (8 bytes), 3 visibility timeout ms,
--       4 max deliveries (0: no limit), 5 how far from the staging list's
--       tail to look for the value, 6 the consumer (for the job's attempt)
-- Returns {'ok', delivery count, due ms or false, now ms, job id or false} | {'dead', deliveries}
-- | {'paused'} (the queue is paused: the value went back to the head of the
-- destination, and the caller waits) | {'full'} (the concurrency limit: the
-- value went back as on a pause) | {'gone'} (no copy near the tail: the reaper already returned it to the
-- queue, and the caller takes again) | {'cancelled'} (the value's job had a
-- cancel asked, lib/jobs.lua's x:<id>: it went to the dead letters with
-- reason 'cancelled before it ran', with a
-- 'job_cancelled' event and the 'cancelled' total; the caller takes again). The due time is known when a tracked
-- transfer moved the value.
--
-- Every delivery is counted on its own: a value with no count record starts
-- at 1, however many identical values are in flight. A record is left by a
-- give-back (nack, timeout, drop) and holds the counts of the copies given
-- back (lib/counts.lua); the next claim of the value takes the highest one
-- that is ready.
-- The delivery goes into the lease set as id .. count (10 digits) .. value.
-- Cost: O(log n) in the deliveries in flight, plus the bounded tail scan.
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'zset', KEYS[3], 'list', KEYS[4], 'zset', KEYS[5], 'hash', KEYS[6], 'zset', KEYS[7], 'hash')
if bad then return bad end
bad = delayq_jobs_check(KEYS[15], KEYS[16])
if bad then return bad end
local events, events_bad = delayq_events_open(KEYS[11], KEYS[12])
if events_bad then return events_bad end
local takes_off, limits_bad, concurrency = delayq_take_limits(KEYS[14])
if limits_bad then return limits_bad end
local value, id = ARGV[1], ARGV[2]
local at = redis.call('lpos', KEYS[1], value, 'RANK', -1, 'MAXLEN', tonumber(ARGV[5]))
if not at then
  return {'gone'}
end
-- The last copy is the one found: LREM from the tail scans no further.
redis.call('lrem', KEYS[1], -1, value)
local marked = tonumber(redis.call('hget', KEYS[7], 'k') or '0')
if at < marked then
  redis.call('hincrby', KEYS[7], 'k', -1)
end
if takes_off or redis.call('exists', KEYS[9]) == 1 then
  -- Paused (or takes switched off) since the move: the value goes back where it was taken from.
  redis.call('lpush', KEYS[8], value)
  return {'paused'}
end
local now = delayq_server_ms()
local room = delayq_take_room(concurrency, KEYS[2], now)
if room and room <= 0 then
  -- At the concurrency limit (set since this client last looked: on a
  -- limited queue its takes claim with claim_batch, which refuses before
  -- it moves anything): the value goes back where it was taken from.
  redis.call('lpush', KEYS[8], value)
  return {'full'}
end
local deliveries = delayq_counts_take(KEYS[5], KEYS[6], redis.sha1hex(value), now) + 1
local max = tonumber(ARGV[4])
local jobs = delayq_jobs_on(KEYS[15]) and delayq_jobs_claims(KEYS[15], KEYS[16], {value}, now)
local job = jobs and jobs.ids[1]
if job and delayq_jobs_claim_is_cancelled(jobs, 1) then
  -- A job whose cancel was asked: to the dead letters (never dropped: an
  -- equal value could be the one found), and the caller takes again.
  delayq_dead_letter(KEYS[3], KEYS[10], value, delayq_jobs_reason(job, 'cancelled before it ran'))
  delayq_jobs_claim_cancelled(jobs, 1)
  delayq_jobs_flush(jobs)
  delayq_event(events, KEYS[12], 'job_cancelled', 'count', 1, 'running', 0, 'job', job)
  delayq_count(KEYS[13], 'cancelled', 1)
  delayq_batches_ended(delayq_batches_open(17, events, KEYS[12]), {job}, 'c', now)
  return {'cancelled'}
end
if max > 0 and deliveries > max then
  local reason = 'delivered ' .. (deliveries - 1) .. ' times without an ack (max_deliveries ' .. max .. ')'
  delayq_dead_letter(KEYS[3], KEYS[10], value, delayq_jobs_reason(job, reason))
  if job then
    delayq_jobs_claim_dead(jobs, 1, reason)
    delayq_jobs_flush(jobs)
    delayq_batches_ended(delayq_batches_open(17, events, KEYS[12]), {job}, 'd', now)
    delayq_event(events, KEYS[12], 'dead_lettered', 'count', 1, 'reason', reason, 'job', job)
  else
    delayq_event(events, KEYS[12], 'dead_lettered', 'count', 1, 'reason', reason)
  end
  delayq_count(KEYS[13], 'dead_lettered', 1)
  return {'dead', deliveries - 1}
end
redis.call('zadd', KEYS[2], now + tonumber(ARGV[3]), id .. string.format('%010d', deliveries) .. value)
if job then
  delayq_jobs_claimed(jobs, 1, id, ARGV[6])
  delayq_jobs_flush(jobs)
  delayq_event(events, KEYS[12], 'claimed', 'count', 1, 'deliveries', delayq_hex(id), 'attempt', deliveries, 'job', job)
else
  delayq_event(events, KEYS[12], 'claimed', 'count', 1, 'deliveries', delayq_hex(id), 'attempt', deliveries)
end
local due = redis.call('zscore', KEYS[4], value)
if due then
  redis.call('zrem', KEYS[4], value)
end
return {'ok', deliveries, due or false, now, job or false}
