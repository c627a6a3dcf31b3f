-- LIBS: element offer request counts jobs events traces priority groups
-- release_unhandled: give deliveries no handler saw back to the head of the
-- destination, uncounted (nack.lua's -3 for each), in one call and in their
-- order: the first delivery given ends first in line, the rest behind it in
-- the order given, all in front of what the list held. A worker gives back
-- what it claimed ahead of its handlers this way as the queue pauses, as it
-- stops, and when values wait too long; in one run, so that no claim (this
-- worker's, another's) lands between two of them.
-- KEYS: 1 lease set (delayq_leases), 2 destination list, 3 count records
--       (hash), 4 count record expiry (zset), 5 trace records
--       (delayq_traces, lib/traces.lua), 6 trace expiry, 7 the run's lane
--       record (lib/request.lua), 8 events config, 9 events stream
--       (lib/events.lua: one 'released' event per call that gives back
--       any, with the count it gave back: a resend writes none), 10 job
--       records, 11 job record expiry (lib/jobs.lua: a job's claim is
--       undone, no attempt kept, and it is first in line again), 12
--       priority ready set, 13 priority marker (lib/priority.lua: a
--       delivery of a priority level goes back to the head of that level),
--       14 TTL store (delayq_ttl, lib/priority.lua: a delivery of a value
--       with a TTL goes back to the head of its level (the default too), with the
--       same expiry; its entry goes. Optional: a run by hand with older keys),
--       15 group values, 16 group delayed, 17 group ring, 18 group blocked,
--       19 group state (lib/groups.lua: a grouped delivery goes back to the
--       head of its key's line, in claim order, its slot freed; optional)
-- ARGV: 1 the run's id in its lane, 2 how long a count record outlives the
--       value's return to the destination (ms), then per delivery, in claim
--       order: the delivery (8-byte id, 10-digit count, value) and its trace
--       context ('' for none; feature opentelemetry)
-- Returns one integer per delivery, in order: 1 when it went back, 0 when
-- it was no longer in flight (the reaper had given it back).
--
-- Harmless to resend, as ack_batch.lua: a run that gave back anything
-- leaves its reply in its lane's record (delayq_runs:{N}:<lane>, replaced by
-- the lane's next run, gone after a minute), and a resend answers that and
-- moves nothing; a run that gave back nothing answers 0s again when run
-- again. A late copy of a run older than the lane's last gives back what
-- is still in flight (a delivery leaves the lease set once, so nothing is
-- pushed twice) and leaves the record alone.
-- Cost: O(k log m) for k deliveries, at most DELAYQ_RELEASE_MAX a call
-- (more is refused before anything changes), and m in flight.
local DELAYQ_RELEASE_MAX = 256
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'list', KEYS[3], 'hash', KEYS[4], 'zset', KEYS[5], 'hash', KEYS[6], 'zset')
if bad then return bad end
bad = delayq_jobs_check(KEYS[10], KEYS[11])
if bad then return bad end
bad = KEYS[12] and delayq_check_types(KEYS[12], 'zset')
if bad then return bad end
bad = KEYS[14] and delayq_check_types(KEYS[14], 'hash')
if bad then return bad end
if (#ARGV - 2) % 2 ~= 0 then
  return redis.error_reply('DELAYQ_ARGS release_unhandled takes a delivery and a context per value')
end
if (#ARGV - 2) / 2 > DELAYQ_RELEASE_MAX then
  return redis.error_reply('DELAYQ_ARGS release_unhandled gives back at most ' .. DELAYQ_RELEASE_MAX .. ' deliveries a call')
end
local replayed = delayq_run_replayed(KEYS[7], ARGV[1])
local late = type(replayed) == 'table' and replayed.err ~= nil
if replayed and not late then return replayed end
local events, events_bad = delayq_events_open(KEYS[8], KEYS[9])
if events_bad then return events_bad end
local now = delayq_server_ms()
local memory = tonumber(ARGV[2])
local reply, released, values, levels, headers = {}, {}, {}, {}, {}
-- No TTL store, no header to look up: one EXISTS a call.
local store = KEYS[14] and redis.call('exists', KEYS[14]) == 1 and KEYS[14] or nil
local counted = false
local jobbed = delayq_jobs_on(KEYS[10])
local grouped = delayq_groups_open(15)
-- Grouped deliveries given back: their keys and values, in claim order.
local group_keys, group_values, group_seqs = {}, {}, {}
-- Every released value, aligned with `released` (for their jobs).
local released_values = {}
for i = 3, #ARGV, 2 do
  local member, context = ARGV[i], ARGV[i + 1]
  if redis.call('zrem', KEYS[1], member) == 1 then
    reply[#reply + 1] = 1
    local value = string.sub(member, 19)
    local level, count = delayq_priority_lease(member)
    -- Its next delivery counts on from the one before this.
    local kept = count - 1
    if kept > 0 then
      delayq_counts_add(KEYS[3], KEYS[4], redis.sha1hex(value), kept, now, now + memory)
      counted = true
    end
    if context ~= '' then
      delayq_traces_put(KEYS[5], KEYS[6], context, {value}, {now})
    end
    released[#released + 1] = string.sub(member, 1, 8)
    released_values[#released] = value
    local group, seq = delayq_group_release(grouped, released[#released])
    if group then
      group_keys[#group_keys + 1] = group
      group_values[#group_keys] = value
      group_seqs[#group_keys] = seq
    else
      values[#values + 1] = value
      levels[#values] = level
      headers[#values] = delayq_ttl_take(store, released[#released]) or false
    end
  else
    reply[#reply + 1] = 0
  end
end
if jobbed then
  -- Last first: each job first in line, as its value.
  for i = #released, 1, -1 do
    delayq_jobs_end_ready(KEYS[10], KEYS[11], released[i], 'unhandled', released_values[i], now, true)
  end
end
if #group_keys > 0 then
  -- Each back to its own place in its line.
  for i = 1, #group_keys do
    delayq_group_add(grouped, group_keys[i], group_values[i], group_seqs[i])
  end
  for i = 1, #group_keys do delayq_group_runnable(grouped, group_keys[i]) end
end
if counted then
  delayq_counts_expire(KEYS[3], KEYS[4], now + memory)
end
if #values > 0 then
  -- Each to the head of its level (the list for the default), the first
  -- given first.
  local by_level, headers_by_level = {}, {}
  for i = 1, #values do
    local at = by_level[levels[i]] or {}
    local headed = headers_by_level[levels[i]] or {}
    at[#at + 1] = values[i]
    headed[#at] = headers[i]
    by_level[levels[i]] = at
    headers_by_level[levels[i]] = headed
  end
  for level = 0, 9 do
    if by_level[level] then
      delayq_priority_give_back(KEYS[12], KEYS[13], KEYS[2], level, by_level[level], headers_by_level[level])
    end
  end
end
if #released > 0 then
  delayq_event(events, KEYS[9], 'released', 'count', #released, 'deliveries', delayq_event_ids(released))
end
return delayq_run_answer(KEYS[7], ARGV[1], reply, #released > 0 and not late)
