-- LIBS: element offer request jobs events batches groups
-- ack_batch: settle many deliveries for good (ack.lua for each, in one call).
-- KEYS: 1 lease set (delayq_leases), 2 the run's lane record (lib/request.lua),
--       3 events config, 4 events stream (lib/events.lua: one 'acked' event
--       per call that settles any, with the count it settled: a resend
--       writes none; with the job ids of the first, as a JSON array, when
--       they have any), 5 stats hash (the 'acked' total), 6 job records,
--       7 job record expiry (lib/jobs.lua: the deliveries' jobs, if any,
--       are handled), 8 TTL store (delayq_ttl, lib/priority.lua: the
--       deliveries' TTL headers, if any, go; optional), 9 batch records,
--       10 batch outbox, 11 batch expiry (lib/batches.lua: members among
--       the jobs are counted as handled; optional), 12 group values, 13
--       group delayed, 14 group ring, 15 group blocked, 16 group state
--       (lib/groups.lua: grouped deliveries free their keys' slots;
--       optional)
-- ARGV: 1 the run's id in its lane, 2 how long a handled job's history is
--       kept (ms) when the queue's switch ('on') does not say, 3.. the
--       deliveries (8-byte id, 10-digit count, value); or, when ARGV[3] is
--       'R', 4.. pairs of a delivery and its job's result (JSON, '' for
--       none: lib/jobs.lua keeps it as o:<id>, with one 'result' event a run)
-- Returns one integer per delivery, in order: 1 when it is acknowledged, 0
-- when it is too late (its visibility timeout gave it back); the first
-- acknowledged one answers 2 instead when the run completed a batch.
--
-- Harmless to resend: a run that acked anything leaves its reply in its
-- lane's record (one small key per lane and queue, replaced by the lane's
-- next such run, gone after a minute), and a resend answers that; a run
-- that acked nothing answers 0s again when run again. A late copy of a run
-- older than the lane's last (its client gave up on it) acks what is still
-- in flight and leaves the record alone. A worker keeps one lane per ack on
-- its way (src/queue/reliable/ack_sink.rs). Where single acks remember
-- each acked id (ack.lua's acked set), a batch remembers one record: that
-- bookkeeping was two thirds of a batch ack's cost.
-- Cost: O(k log m) for k deliveries and m in flight.
local bad = delayq_check_types(KEYS[1], 'zset')
if bad then return bad end
bad = delayq_jobs_check(KEYS[6], KEYS[7])
if bad then return bad end
bad = KEYS[8] and delayq_check_types(KEYS[8], 'hash')
if bad then return bad end
local replayed = delayq_run_replayed(KEYS[2], ARGV[1])
-- A late copy of a run older than the lane's last (its client gave up on
-- it) still acks what it can, harmlessly, but leaves the record alone.
local late = type(replayed) == 'table' and replayed.err ~= nil
if replayed and not late then return replayed end
local events, events_bad = delayq_events_open(KEYS[3], KEYS[4])
if events_bad then return events_bad end
-- Which are still in flight in one ZMSCORE, and those removed in one ZREM
-- (a ZREM per delivery was most of the script); a delivery named twice
-- counts once, as a ZREM each would have.
-- The deliveries, and their results (by delivery id) when the run has them.
local members, results = ARGV, nil
if ARGV[3] == 'R' then
  members, results = {'', ''}, {}
  for i = 4, #ARGV, 2 do
    members[#members + 1] = ARGV[i]
    if ARGV[i + 1] ~= '' then results[string.sub(ARGV[i], 1, 8)] = ARGV[i + 1] end
  end
end
local reply, acked, gone, seen = {}, {}, {}, {}
for from = 3, #members, 4000 do
  local to = math.min(from + 3999, #members)
  local scores = redis.call('zmscore', KEYS[1], unpack(members, from, to))
  for i = from, to do
    local member = members[i]
    if scores[i - from + 1] and not seen[member] then
      seen[member] = true
      reply[i - 2] = 1
      gone[#gone + 1] = member
      acked[#acked + 1] = string.sub(member, 1, 8)
    else
      reply[i - 2] = 0
    end
  end
end
if #gone > 0 then
  delayq_call_chunked('zrem', KEYS[1], gone)
end
if #acked > 0 and KEYS[8] and redis.call('exists', KEYS[8]) == 1 then
  delayq_call_chunked('hdel', KEYS[8], acked)
end
local grouped = #acked > 0 and delayq_groups_open(12)
if grouped then
  local freed, seen_key = {}, {}
  for _, delivery in ipairs(acked) do
    local key = delayq_group_release(grouped, delivery)
    if key and not seen_key[key] then
      seen_key[key] = true
      freed[#freed + 1] = key
    end
  end
  for _, key in ipairs(freed) do delayq_group_runnable(grouped, key) end
end
local jobs, now, kept = {}, nil, {}
if #acked > 0 and delayq_jobs_on(KEYS[6]) then
  now = delayq_server_ms()
  -- Their attempts end and their records are handled: two HMGETs and a
  -- write of each kind for the lot (lib/jobs.lua).
  jobs, kept = delayq_jobs_acked(KEYS[6], KEYS[7], acked, now, now + delayq_jobs_keep(KEYS[6], ARGV[2]), results)
end
if #jobs > 0 then
  delayq_jobs_reap(KEYS[6], KEYS[7], now, #jobs)
  -- A run that completed a batch says so (its first ack answers 2): the
  -- client's reaper then offers the completion at once.
  if delayq_batches_ended(delayq_batches_open(9, events, KEYS[4]), jobs, 'h', now) > 0 then
    for i = 1, #reply do
      if reply[i] == 1 then reply[i] = 2; break end
    end
  end
  local named = {}
  for i = 1, math.min(#jobs, DELAYQ_EVENT_IDS) do named[i] = jobs[i] end
  delayq_event(events, KEYS[4], 'acked', 'count', #acked, 'deliveries', delayq_event_ids(acked), 'jobs', cjson.encode(named))
  if #kept > 0 then
    local results_named = {}
    for i = 1, math.min(#kept, DELAYQ_EVENT_IDS) do results_named[i] = kept[i] end
    delayq_event(events, KEYS[4], 'result', 'count', #kept, 'jobs', cjson.encode(results_named))
  end
elseif #acked > 0 then
  delayq_event(events, KEYS[4], 'acked', 'count', #acked, 'deliveries', delayq_event_ids(acked))
end
delayq_count(KEYS[5], 'acked', #acked)
return delayq_run_answer(KEYS[2], ARGV[1], reply, #acked > 0 and not late)
