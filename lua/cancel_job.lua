-- LIBS: element offer request ids jobs events batches
-- cancel_job: stop a job, wherever it is (ReliableQueue::cancel_job).
-- KEYS: 1 timeout set, 2 pending list, 3 id index, 4 job records, 5 job
--       record expiry, 6 events config, 7 events stream (lib/events.lua:
--       'cancelled' with the id for a pending element removed,
--       'cancel_requested' with the id and where the job was for a cancel
--       asked), 8 stats hash (the 'cancelled' total, for a pending element
--       removed), 9 batch records, 10 batch outbox, 11 batch expiry
--       (lib/batches.lua: a member removed while pending is counted as
--       cancelled), 12 request key (lib/request.lua: a resend gets the
--       first run's reply and writes nothing twice)
-- ARGV: 1 id
-- Returns {what, detail}:
--   {'pending', false}: its element waited in the delayed queue and is gone
--     (as DelayedQueue::cancel); a retry's record says 'cancelled';
--   {'running', delivery (16 hex digits)}: a consumer holds it; the cancel
--     is asked (lib/jobs.lua's x:<id>): a Worker running it tells its
--     handler within its poll, and a handler that stops settles it as
--     cancelled (lua/nack.lua, delay -4); if its lease ends otherwise (a
--     nack, a timeout), the take that reaches it next drops it;
--   {'queued', state}: ready in the list (or waiting as a retry where the
--     id index does not reach it); the cancel is asked, and the take that
--     reaches it drops it (claim.lua, claim_batch.lua);
--   {'finished', state}: it ended already ('handled', 'dead', 'deleted',
--     'cancelled', 'removed'): nothing changes;
--   {'unknown', false}: no such id pending and no record (history off,
--     never offered with this id, or its record expired).
-- A cancel asked twice is asked once (one event). Only delayq's reliable
-- takes and workers read the cancel: a Java consumer, or a plain
-- at-most-once take, may still take a queued job's value.
-- Cost: hash and score lookups, and at most one removal from the pending
-- list (bounded as cancel_id's).
local request = KEYS[12]
local replayed = delayq_replayed(request)
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'list', KEYS[3], 'hash')
if bad then return bad end
bad = delayq_jobs_check(KEYS[4], KEYS[5])
if bad then return bad end
local events, events_bad = delayq_events_open(KEYS[6], KEYS[7])
if events_bad then return events_bad end
local id = ARGV[1]
local now = delayq_server_ms()
local jobbed = delayq_jobs_on(KEYS[4])
local element, _, field = delayq_id_find(KEYS[3], KEYS[1], id)
if element then
  redis.call('zrem', KEYS[1], element)
  delayq_pending_remove(KEYS[2], element)
  redis.call('hdel', KEYS[3], field)
  -- A retry waiting in the delayed queue has a record: it ends here.
  local record = jobbed and delayq_jobs_get(KEYS[4], id)
  if record then
    delayq_jobs_cancelled(KEYS[4], KEYS[5], id, record, now, now + delayq_jobs_keep(KEYS[4], DELAYQ_JOBS_CANCELLED_TTL), 'cancelled before it was due')
  end
  delayq_event(events, KEYS[7], 'cancelled', 'count', 1, 'id', id)
  delayq_count(KEYS[8], 'cancelled', 1)
  if jobbed then delayq_batches_ended(delayq_batches_open(9, events, KEYS[7]), {id}, 'c', now) end
  return delayq_answer(request, {'pending', false})
end
local record = jobbed and delayq_jobs_get(KEYS[4], id)
if not record then
  return delayq_answer(request, {'unknown', false})
end
if record.s ~= 'in_flight' and record.s ~= 'ready' and record.s ~= 'pending' then
  return delayq_answer(request, {'finished', record.s})
end
local where = record.s == 'in_flight' and 'running' or 'queued'
if redis.call('hsetnx', KEYS[4], 'x:' .. id, delayq_jobs_ms(now)) == 1 then
  redis.call('zadd', KEYS[5], now + DELAYQ_JOBS_READY_TTL, 'x:' .. id)
  delayq_event(events, KEYS[7], 'cancel_requested', 'id', id, 'state', where)
end
if where == 'running' then
  return delayq_answer(request, {'running', record.d or false})
end
return delayq_answer(request, {'queued', record.s})
