-- LIBS: element jobs events batches groups
-- ack: settle a delivery for good.
-- KEYS: 1 lease set (delayq_leases), 2 acked set, 3 events config, 4 events
--       stream (lib/events.lua: 'acked' when this run settles it, so a
--       resent ack writes none), 5 stats hash (the 'acked' total), 6 job
--       records, 7 job record expiry (lib/jobs.lua: the delivery's job, if
--       any, is handled), 8 TTL store (delayq_ttl, lib/priority.lua: the
--       delivery's TTL header, if any, goes; optional), 9 batch records,
--       10 batch outbox, 11 batch expiry (lib/batches.lua: a member job is
--       counted as handled; optional), 12 group values, 13 group delayed,
--       14 group ring, 15 group blocked, 16 group state (lib/groups.lua: a
--       grouped delivery frees its key's slot; optional)
-- ARGV: 1 delivery (8-byte id, 10-digit count, value), 2 how long acked ids
--       are remembered (ms), 3 most acked ids remembered, 4 how long a
--       handled job's history is kept (ms) when the queue's switch does
--       not say (lib/jobs.lua's 'on'), 5 the job's result (JSON; '' or
--       absent: none), kept as lib/jobs.lua's o:<id> when the delivery has
--       a job, with a 'result' event
-- Returns 1 when the delivery is (or already was) acknowledged, 0 when it is
-- too late: its visibility timeout ran out and the value went back to the queue.
--
-- The acked set only serves retries of an ack whose reply was lost, so it
-- keeps ids for a short window and at most a fixed number of them: each ack
-- drops up to two ids that are too old or over the cap (so the set shrinks
-- while acks keep coming) and the whole set expires when acks stop.
-- Cost: O(log n).
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'zset')
if bad then return bad end
bad = delayq_jobs_check(KEYS[6], KEYS[7])
if bad then return bad end
bad = KEYS[8] and delayq_check_types(KEYS[8], 'hash')
if bad then return bad end
local events, events_bad = delayq_events_open(KEYS[3], KEYS[4])
if events_bad then return events_bad end
local member = ARGV[1]
local id = string.sub(member, 1, 8)
if redis.call('zrem', KEYS[1], member) == 1 then
  local now = delayq_server_ms()
  local window, cap = tonumber(ARGV[2]), tonumber(ARGV[3])
  local oldest = redis.call('zrange', KEYS[2], 0, 1, 'WITHSCORES')
  for i = 1, #oldest, 2 do
    if tonumber(oldest[i + 1]) <= now - window then
      redis.call('zrem', KEYS[2], oldest[i])
    end
  end
  local over = redis.call('zcard', KEYS[2]) - cap + 1
  if over > 0 then
    redis.call('zpopmin', KEYS[2], math.min(over, 2))
  end
  redis.call('zadd', KEYS[2], now, id)
  if KEYS[8] then
    redis.call('hdel', KEYS[8], id)
  end
  local grouped = delayq_groups_open(12)
  local group = delayq_group_release(grouped, id)
  if group then delayq_group_runnable(grouped, group) end
  redis.call('pexpire', KEYS[2], window)
  local job, record
  if delayq_jobs_on(KEYS[6]) then
    job, record = delayq_jobs_end(KEYS[6], id, 'ok', now)
  end
  if job then
    local expires = now + delayq_jobs_keep(KEYS[6], ARGV[4])
    delayq_jobs_put(KEYS[6], KEYS[7], job, record, 'handled', now, expires)
    delayq_jobs_end_one(KEYS[6], KEYS[7], job, expires)
    local result = delayq_jobs_result_text(ARGV[5], now)
    if result then
      redis.call('hset', KEYS[6], 'o:' .. job, result)
      redis.call('zadd', KEYS[7], expires, 'o:' .. job)
    else
      redis.call('hdel', KEYS[6], 'o:' .. job)
      redis.call('zrem', KEYS[7], 'o:' .. job)
    end
    delayq_jobs_reap(KEYS[6], KEYS[7], now)
    delayq_batches_ended(delayq_batches_open(9, events, KEYS[4]), {job}, 'h', now)
    delayq_event(events, KEYS[4], 'acked', 'count', 1, 'deliveries', delayq_hex(id), 'job', job)
    if result then delayq_event(events, KEYS[4], 'result', 'count', 1, 'job', job) end
  else
    delayq_event(events, KEYS[4], 'acked', 'count', 1, 'deliveries', delayq_hex(id))
  end
  delayq_count(KEYS[5], 'acked', 1)
  return 1
end
-- A retried ack (its first reply was lost) is still a success.
if redis.call('zscore', KEYS[2], id) then
  return 1
end
return 0
