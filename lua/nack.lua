-- LIBS: element offer request counts ids jobs events batches priority groups
-- nack: give a delivery back, to be delivered again now or after a delay.
-- KEYS: 1 lease set (delayq_leases), 2 destination list, 3 timeout set, 4 pending list,
--       5 channel, 6 dead-letter list, 7 count records (hash), 8 count
--       record expiry (zset), 9 dead-letter reasons (list), 10 events config,
--       11 events stream (lib/events.lua: 'retried' with the attempt and
--       delay, 'released' for a value that reached no consumer (-3),
--       'job_cancelled' (-4) or 'dead_lettered'; with the job id when it
--       has one), 12 stats hash (the 'failed' total: every nack but a
--       give-back, -1, -3 and -4; the 'dead_lettered' and 'cancelled' totals), 13 id index, 14 job records, 15 job record
--       expiry (lib/jobs.lua: the delivery's job, if any, ends its attempt
--       and follows its value: a retry through the delayed queue is offered
--       under the job's id again), 16 priority ready set, 17 priority
--       delayed set, 18 priority marker (lib/priority.lua: a delivery of a
--       priority level goes back to that level, with a delay into the
--       delayed set, never to Redisson's keys), 19 TTL store (delayq_ttl,
--       lib/priority.lua: a delivery of a value with a TTL goes back to its
--       level (the default too), with the same expiry; its entry goes), 20
--       batch records, 21 batch outbox, 22 batch expiry (lib/batches.lua:
--       a member job dead-lettered or cancelled is counted), 23 group
--       values, 24 group delayed, 25 group ring, 26 group blocked, 27
--       group state (lib/groups.lua: a grouped delivery frees its key's
--       slot, and its value goes back to its key's line, never to
--       Redisson's keys: to its head (-1, -3), its tail (0), or after the
--       delay as the group settings say), 28 request key (lib/request.lua: a resend gets the first run's reply
--       and changes nothing, so a job's attempt ends once and nothing is
--       counted twice). The request key is the last KEY: a run by hand with
--       older keys (19, no TTL store) keeps working.
-- ARGV: 1 delivery (8-byte id, 10-digit count, value), 2 delay ms (0: back
--       to the destination's tail at once; -1: to its head, first in line
--       again; -2: to the dead-letter list, no count kept; -3: to its head,
--       not counted as a delivery: it reached no consumer; -4: to the
--       dead-letter list with reason 'cancelled while it ran', not
--       retried: its job stopped on the cancel asked for it (lib/jobs.lua's
--       x:<id>), with
--       a 'job_cancelled' event and the 'cancelled' total; a delivery whose
--       job has no cancel asked is left in flight and answered 2),
--       3 the value packed for the delayed queue, 4 how long a count record
--       outlives the value's return to the destination (ms), 5 why, for a
--       dead letter, 6 the attempt's outcome for the job's history
--       ('failed', 'nacked', 'rejected', 'dropped', 'cancelled' (a
--       shutdown's give-back), 'job_cancelled' (delay -4),
--       'unhandled': not an attempt), 7 its error, 8 the error's source
--       chain, 9 a backtrace ('' for none; capped by lib/jobs.lua)
-- Returns 1, or 0 when the delivery was no longer in flight, or 2 (delay -4
-- only) when no cancel was asked for its job: nothing changed.
--
-- The delivery's count is remembered for the value (see claim.lua), so that
-- its next delivery counts on; the record expires once the value should
-- long have been taken again (a Java consumer or a plain take may take it,
-- and never consume the record). Cost: O(log n).
local request = KEYS[#KEYS]
local store = #KEYS >= 20 and KEYS[19] or nil
local replayed = delayq_replayed(request)
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'list', KEYS[3], 'zset', KEYS[4], 'list', KEYS[6], 'list', KEYS[7], 'hash', KEYS[8], 'zset', KEYS[9], 'list', KEYS[13], 'hash')
if bad then return bad end
bad = delayq_jobs_check(KEYS[14], KEYS[15])
if bad then return bad end
bad = delayq_check_types(KEYS[16], 'zset', KEYS[17], 'zset')
if bad then return bad end
if store then
  bad = delayq_check_types(store, 'hash')
  if bad then return bad end
end
local events, events_bad = delayq_events_open(KEYS[10], KEYS[11])
if events_bad then return events_bad end
local member = ARGV[1]
local level, count = delayq_priority_lease(member)
local value = string.sub(member, 19)
local delay = tonumber(ARGV[2])
-- Its section (TTL header, headers), if it has one (kept by its claim).
local header = delayq_ttl_of(store, string.sub(member, 1, 8))
-- A retry through the delayed queue files its job under its id again,
-- where an id collision refuses (lib/ids.lua): looked up before anything
-- is written. Reads only, but for a stale index entry dropped on the way.
local refile = false
if delay > 0 and level == 0 and not header and delayq_jobs_on(KEYS[14]) and redis.call('zscore', KEYS[1], member)
    and not redis.call('zscore', KEYS[3], ARGV[3]) then
  local id = redis.call('hget', KEYS[14], 'l:' .. string.sub(member, 1, 8))
  local _, format = delayq_payload(ARGV[3])
  refile = id and format and not delayq_id_find(KEYS[13], KEYS[3], id) and true or false
end
if delay == -4 and redis.call('zscore', KEYS[1], member) then
  -- Checked before anything moves: a drop without a cancel asked would
  -- lose the value.
  local id = delayq_jobs_on(KEYS[14]) and redis.call('hget', KEYS[14], 'l:' .. string.sub(member, 1, 8))
  if not id or redis.call('hexists', KEYS[14], 'x:' .. id) == 0 then
    return delayq_answer(request, 2)
  end
end
if redis.call('zrem', KEYS[1], member) == 0 then
  return delayq_answer(request, 0)
end
if store then
  -- Removed even when not a section (written by hand): the lease ends.
  redis.call('hdel', store, string.sub(member, 1, 8))
end
-- A grouped delivery's key (lib/groups.lua), its slot freed.
local grouped = #KEYS >= 28 and delayq_groups_open(23)
local group, group_seq = delayq_group_release(grouped, string.sub(member, 1, 8))
local now = delayq_server_ms()
local job, record
if delayq_jobs_on(KEYS[14]) then
  job, record = delayq_jobs_end(KEYS[14], string.sub(member, 1, 8), ARGV[6], now, ARGV[7], ARGV[8], ARGV[9])
end
-- The job id, as the last two fields of an event (none without a job).
local named = job and {'job', job} or {}
local batches = job and #KEYS >= 23 and delayq_batches_open(20, events, KEYS[11])
if delay == -4 then
  -- Kept in the dead letters, never dropped (undone by a requeue).
  delayq_dead_letter(KEYS[6], KEYS[9], value, delayq_jobs_reason(job, 'cancelled while it ran'), delayq_section_headers(header))
  delayq_jobs_cancelled(KEYS[14], KEYS[15], job, record, now, now + delayq_jobs_keep(KEYS[14], DELAYQ_JOBS_CANCELLED_TTL), 'cancelled while it ran')
  delayq_event(events, KEYS[11], 'job_cancelled', 'count', 1, 'running', 1, 'deliveries', delayq_hex(string.sub(member, 1, 8)), 'job', job)
  delayq_count(KEYS[12], 'cancelled', 1)
  delayq_batches_ended(batches, {job}, 'c', now)
  if group then delayq_group_runnable(grouped, group) end
  return delayq_answer(request, 1)
end
if delay == -2 then
  delayq_dead_letter(KEYS[6], KEYS[9], value, delayq_jobs_reason(job, ARGV[5]), delayq_section_headers(header))
  if job then
    delayq_jobs_dead(KEYS[14], KEYS[15], job, record, ARGV[5], now)
    delayq_batches_ended(batches, {job}, 'd', now)
  end
  delayq_event(events, KEYS[11], 'dead_lettered', 'count', 1, 'delivery', delayq_hex(string.sub(member, 1, 8)), 'reason', ARGV[5], unpack(named))
  delayq_count(KEYS[12], 'failed', 1)
  delayq_count(KEYS[12], 'dead_lettered', 1)
  if group then delayq_group_runnable(grouped, group) end
  return delayq_answer(request, 1)
end
if delay == -3 then
  delayq_event(events, KEYS[11], 'released', 'count', 1, 'deliveries', delayq_hex(string.sub(member, 1, 8)), unpack(named))
else
  delayq_event(events, KEYS[11], 'retried', 'delivery', delayq_hex(string.sub(member, 1, 8)), 'attempt', count, 'delay_ms', math.max(delay, 0), unpack(named))
  if delay >= 0 then delayq_count(KEYS[12], 'failed', 1) end
end
local back = now + math.max(delay, 0)
local kept = count
if delay == -3 then
  -- Its next delivery counts on from the one before this.
  kept = kept - 1
end
if kept > 0 then
  delayq_counts_add(KEYS[7], KEYS[8], redis.sha1hex(value), kept, back, back + tonumber(ARGV[4]))
  delayq_counts_expire(KEYS[7], KEYS[8], back + tonumber(ARGV[4]))
end
if group then
  -- Back to its key's line (grouped values are no jobs).
  -- Back to its own place (a give-back, a drop, a retry due now), or
  -- retried as the group settings say.
  if delay <= 0 then
    delayq_group_add(grouped, group, value, group_seq)
    delayq_group_runnable(grouped, group)
  else
    delayq_group_retry(grouped, group, group_seq, value, delay, now)
  end
  return delayq_answer(request, 1)
end
-- The job follows its value: to the ready list (its id filed under the
-- payload), or to the delayed queue under its id again.
local function ready(head)
  if job then
    delayq_jobs_put(KEYS[14], KEYS[15], job, record, 'ready', now, now + DELAYQ_JOBS_READY_TTL)
    local ids, field = delayq_jobs_ready_ids(KEYS[14], value)
    if #ids < DELAYQ_JOBS_PER_VALUE then
      if head then table.insert(ids, 1, job) else ids[#ids + 1] = job end
      delayq_jobs_ready_save(KEYS[14], KEYS[15], field, ids, now)
    end
  end
end
if delay < 0 then
  delayq_priority_give_back(KEYS[16], KEYS[18], KEYS[2], level, {value}, {header or false})
  ready(true)
  return delayq_answer(request, 1)
end
if level > 0 or header then
  -- Back to its level: at the tail, or after the delay through the
  -- delayed set (Redisson's transfer would move it to the list).
  local seq = redis.call('incr', KEYS[18])
  local entry = delayq_priority_member(level, value, seq, header)
  if delay == 0 then
    delayq_priority_add(KEYS[16], KEYS[18], {entry}, false)
    ready(false)
  else
    redis.call('zadd', KEYS[17], now + delay, entry)
    if job then delayq_jobs_put(KEYS[14], KEYS[15], job, record, 'pending', now, nil) end
  end
  return delayq_answer(request, 1)
end
local element = ARGV[3]
if delay == 0 or redis.call('zscore', KEYS[3], element) then
  redis.call('rpush', KEYS[2], value)
  ready(false)
  return delayq_answer(request, 1)
end
if job then
  -- Its own id bytes, indexed, unless the id is pending again (offered
  -- anew while this value ran): then it goes as a plain element.
  if refile then
    local _, format = delayq_payload(element)
    element = delayq_pack(format, delayq_id_bytes(format, job), value)
    redis.call('hset', KEYS[13], delayq_element_id(element), delayq_id_entry(job, element))
  end
  delayq_jobs_put(KEYS[14], KEYS[15], job, record, 'pending', now, nil)
end
-- Offered like any offer (lib/offer.lua). The due time goes as a number:
-- ZADD and PUBLISH get the same text of it, the score as Redis writes it.
delayq_offer(KEYS[3], KEYS[4], KEYS[5], {now + delay}, {element})
return delayq_answer(request, 1)
