-- LIBS: element counts jobs events batches limits priority groups
-- claim_batch: pop up to n ready values from the destination's head and
-- claim each as a delivery (what a move plus claim.lua does for one value,
-- in one round trip and without the staging list), or dead-letter it.
-- KEYS: 1 destination list, 2 lease set (delayq_leases), 3 dead-letter list,
--       4 due-time set (lateness tracking), 5 count records (hash), 6 count
--       record expiry (zset), 7 pause flag, 8 dead-letter reasons (list), 9 events
--       config, 10 events stream (lib/events.lua: one 'claimed' event per
--       call that claims any, one 'dead_lettered' per call that dead-letters any;
--       each names the job ids of its first values, as a JSON array, when
--       they have any), 11 stats hash (the 'dead_lettered' and 'cancelled' totals), 12 limits
--       hash (lib/limits.lua: takes switched off answer as paused; under a
--       concurrency limit it claims at most as many as the live leases
--       leave room for, and answers 'full' when they leave none), 13 job
--       records, 14 job record expiry (lib/jobs.lua: the job of a value, if
--       any, starts an attempt), 15 priority ready set, 16 priority delayed
--       set, 17 priority marker (lib/priority.lua: once the marker exists,
--       due delayed priority values move to the ready set first, and values
--       come from the ready set, highest level first, before the list;
--       an expired value (message TTL) is not claimed: it goes to the dead
--       letters with reason 'expired', or is dropped, with one 'expired'
--       event per call and the 'expired' total), 18 TTL store (delayq_ttl,
--       lib/priority.lua: a claimed value's section (TTL header, headers)
--       under its delivery id; optional, as 15-17: a run by hand with
--       older keys claims values with a TTL as any other and keeps no
--       section), 19 batch records, 20 batch outbox, 21 batch expiry
--       (lib/batches.lua: a member job dead-lettered or dropped as
--       cancelled is counted; optional), 22 group values, 23 group
--       delayed, 24 group ring, 25 group blocked, 26 group state
--       (lib/groups.lua: once the state exists, due grouped values and
--       keys move first, then values come from the ring, one per key a
--       turn, after the priority levels and before the list, at most half
--       the claim while the list has values too; optional)
-- ARGV: 1 batch id (6 bytes), 2 most values (n, at most 128), 3 visibility timeout ms,
--       4 max deliveries (0: no limit), 5 most payload bytes, 6 the consumer
--       (for the jobs' attempts)
-- Returns {'paused'} or {'full'} (nothing popped) or {'ok' (or 'more': it skipped as
-- many expired or foreign values as a call may, and read no list; call
-- again), now ms, the number of values answered n (a job whose cancel was
-- asked, lib/jobs.lua's x:<id>, goes to the dead letters with reason
-- 'cancelled before it ran', with a 'job_cancelled' event and the
-- 'cancelled' total, and is not answered), the room the
-- concurrency limit has left after this claim (false: no limit), then per value, in take
-- order: value, delivery count * 10 + priority level (0: the list's; a
-- count of 0 or below: dead-lettered after minus that many deliveries,
-- times 10, no level); then, for the values that have them, triples of
-- its index (from 1) and 'd' and its due ms, 'j' and its job's id, or 'h'
-- and its headers (the JSON object it was offered with)}. Two fields a
-- value and the rare ones apart: six a value were a tenth of a worker's
-- CPU, in parsing. The i-th value (from 1) is delivery id batch id ..
-- 2-byte big-endian i.
--
-- Sent once (a second run would claim more values): if its reply is lost,
-- the client finds the batch's deliveries by the batch id and gives them
-- back uncounted (src/queue/reliable/lost_claim.rs). Counts as in claim.lua:
-- each delivery on its own, starting from a given-back copy's count.
-- Cost: O(n log m) in the deliveries in flight m, and at most n values or
-- the byte budget (one value past it: a chunk popped past it goes back;
-- chunks of at most 16, so at most 15 values are read and given back)
-- per call, and at most
-- DELAYQ_PRIORITY_EXPIRE_MAX expired and as many foreign priority members.
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'zset', KEYS[3], 'list', KEYS[4], 'zset', KEYS[5], 'hash', KEYS[6], 'zset')
if bad then return bad end
bad = delayq_jobs_check(KEYS[13], KEYS[14])
if bad then return bad end
local events, events_bad = delayq_events_open(KEYS[9], KEYS[10])
if events_bad then return events_bad end
local takes_off, limits_bad, concurrency = delayq_take_limits(KEYS[12])
if limits_bad then return limits_bad end
if takes_off or redis.call('exists', KEYS[7]) == 1 then
  return {'paused'}
end
-- The fleet-wide limit, before anything is popped: one admission for every
-- source below (priority sets and the list).
local now = delayq_server_ms()
local room = delayq_take_room(concurrency, KEYS[2], now)
if room and room <= 0 then
  return {'full'}
end
local batch, n, visibility, max, budget = ARGV[1], math.min(tonumber(ARGV[2]), 128, room or 128), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
-- No records, no count to look up: spares a SHA1 per value.
local counted = redis.call('exists', KEYS[5]) == 1
local tracked = redis.call('exists', KEYS[4]) == 1
-- No job records, no job to look up: spares a SHA1 per value.
local jobbed = delayq_jobs_on(KEYS[13])
local claimed_jobs, dead_jobs = {}, {}
local reply = {'ok', now, 0, false}
-- The rare fields, answered after the values: (index, kind, text).
local extras = {}
local function extra(i, kind, text)
  extras[#extras + 1] = i
  extras[#extras + 1] = kind
  extras[#extras + 1] = text
end
local ttls = {}
local deadline = now + visibility
-- Every lease in one ZADD at the end: a call per value cost a third of the
-- script.
local leases = {}
local claimed, dead = {}, {}
-- The values first, then their jobs in one lookup (lib/jobs.lua: two
-- HMGETs and a write of each kind for the lot).
local values, levels, headers, bytes = {}, {}, {}, 0
local expiry
-- The priority take stopped at its cap of expired or foreign members: the
-- list is not read (its values go after the ready set's).
local more = false
-- The priority levels first: one EXISTS for a queue that never had them.
if KEYS[17] and redis.call('exists', KEYS[17]) == 1 then
  bad = delayq_check_types(KEYS[15], 'zset', KEYS[16], 'zset')
  if bad then return bad end
  if KEYS[18] then
    bad = delayq_check_types(KEYS[18], 'hash')
    if bad then return bad end
    expiry = delayq_expiry_open(KEYS[3], KEYS[8], now)
  end
  delayq_priority_due(KEYS[15], KEYS[16], KEYS[17], now)
  -- At most as many expired and foreign members a call as lib/priority.lua
  -- allows; then 'more'.
  local _, capped = delayq_priority_take(KEYS[15], n, expiry, KEYS[3], KEYS[8], function(payload, level, section)
    bytes = bytes + #payload
    values[#values + 1] = payload
    levels[#values] = level
    headers[#values] = section
  end, function() return bytes < budget end)
  more = capped
end
-- Grouped values (lib/groups.lua): one EXISTS for a queue that never had any.
local grouped = delayq_groups_open(22)
local group_of, group_seq = {}, {}
if grouped then
  bad = delayq_check_types(grouped.values, 'zset', grouped.delayed, 'zset', grouped.ring, 'zset', grouped.blocked, 'zset', grouped.state, 'hash')
  if bad then return bad end
end
if grouped and not more and #values < n and bytes < budget then
  delayq_group_due(grouped, now)
  if delayq_group_cfg(grouped).rate_n > 0 then delayq_group_sweep_rates(grouped, now) end
  local want = n - #values
  if redis.call('llen', KEYS[1]) > 0 then
    -- Half the claim, so neither the list nor the groups starve; a claim of
    -- one takes from each in turn.
    if want == 1 then
      want = redis.call('hincrby', grouped.state, 'alt', 1) % 2
    else
      want = math.ceil(want / 2)
    end
  end
  delayq_group_take(grouped, want, now, function(payload, key, seq)
    bytes = bytes + #payload
    values[#values + 1] = payload
    levels[#values] = 0
    group_of[#values] = key
    group_seq[#values] = seq
  end, function() return bytes < budget end)
end
-- The list's values by LPOP with a count: a pop per value was a sixth of
-- the script. Two at first, then as many as the sizes so far say still fit
-- the byte budget, never more than read so far (lib/element.lua) nor 16.
local read = 0
while #values < n and bytes < budget and not more do
  -- At most 16 at once: a chunk read past the budget (and given back
  -- below) is at most 15 values, whatever their size.
  local want = read == 0 and math.min(2, n - #values) or delayq_next_chunk(n - #values, read, bytes, budget, 16)
  local popped = redis.call('lpop', KEYS[1], want)
  if not popped then break end
  local kept = #popped
  for i, value in ipairs(popped) do
    bytes = bytes + #value
    values[#values + 1] = value
    levels[#values] = 0
    if bytes >= budget then
      kept = i
      break
    end
  end
  -- Sized by the average so far, a chunk can hold values far larger: what
  -- it popped past the budget (one value past it, as a pop per value took)
  -- goes back to the head, in order.
  if kept < #popped then
    local back = {}
    for i = #popped, kept + 1, -1 do back[#back + 1] = popped[i] end
    delayq_call_chunked('lpush', KEYS[1], back)
    break
  end
  read = read + #popped
  if #popped < want then break end
end
local jobs = false
if jobbed and #values > 0 then
  -- Only the list's values are jobs (Redisson elements offered with an id):
  -- a priority, TTL, headers or grouped value with an equal payload must
  -- not take a job's id.
  local plain, at = {}, {}
  for i = 1, #values do
    if levels[i] == 0 and not headers[i] and not group_of[i] then
      plain[#plain + 1] = values[i]
      at[#plain] = i
    end
  end
  if #plain == #values then
    jobs = delayq_jobs_claims(KEYS[13], KEYS[14], values, now)
  elseif #plain > 0 then
    jobs = delayq_jobs_claims(KEYS[13], KEYS[14], plain, now)
    local ids = {}
    for j = 1, #plain do ids[at[j]] = jobs.ids[j] end
    jobs.ids = ids
  end
end
-- Grouped deliveries' keys, written in one HSET (lib/groups.lua's d:<delivery>).
local group_leases = {}
-- Values answered (claimed or dead-lettered): a job whose cancel was asked
-- is dropped instead, and answered not at all.
local out, cancelled = 0, {}
-- Jobs that end here (dead-lettered, cancelled) and how, for their batches.
local ended, hows = {}, {}
for i, value in ipairs(values) do
  local deliveries = 1
  if counted then
    deliveries = delayq_counts_take(KEYS[5], KEYS[6], redis.sha1hex(value), now) + 1
  end
  local due = false
  if tracked and levels[i] == 0 and not headers[i] then
    due = redis.call('zscore', KEYS[4], value) or false
    if due then
      redis.call('zrem', KEYS[4], value)
    end
  end
  local job = jobs and jobs.ids[i]
  if job and delayq_jobs_claim_is_cancelled(jobs, i) then
    -- Kept in the dead letters, never dropped: a job's value is found by
    -- its payload, so an equal value could be the one stopped (undone by
    -- a requeue).
    delayq_dead_letter(KEYS[3], KEYS[8], value, delayq_jobs_reason(job, 'cancelled before it ran'), delayq_section_headers(headers[i]))
    delayq_jobs_claim_cancelled(jobs, i)
    cancelled[#cancelled + 1] = job
    ended[#ended + 1], hows[#ended + 1] = job, 'c'
  else
    out = out + 1
    if max > 0 and deliveries > max then
      local reason = 'delivered ' .. (deliveries - 1) .. ' times without an ack (max_deliveries ' .. max .. ')'
      delayq_dead_letter(KEYS[3], KEYS[8], value, delayq_jobs_reason(job, reason), delayq_section_headers(headers[i]))
      if job then
        delayq_jobs_claim_dead(jobs, i, reason)
        if #dead_jobs < DELAYQ_EVENT_IDS then dead_jobs[#dead_jobs + 1] = job end
        ended[#ended + 1], hows[#ended + 1] = job, 'd'
      end
      if events then dead[#dead + 1] = deliveries - 1 end
      deliveries = 1 - deliveries
      if group_of[i] then delayq_group_unclaimed(grouped, group_of[i]) end
    else
      local id = batch .. string.char(math.floor(out / 256), out % 256)
      if job then
        delayq_jobs_claimed(jobs, i, id, ARGV[6])
        if #claimed_jobs < DELAYQ_EVENT_IDS then claimed_jobs[#claimed_jobs + 1] = job end
      end
      local count = delayq_priority_count_field(levels[i], deliveries)
      leases[#leases + 1] = deadline
      leases[#leases + 1] = id .. count .. value
      if headers[i] then
        ttls[#ttls + 1] = id
        ttls[#ttls + 1] = headers[i]
      end
      if events then claimed[#claimed + 1] = id end
      if group_of[i] then
        group_leases[#group_leases + 1] = 'd:' .. id
        group_leases[#group_leases + 1] = group_seq[i] .. group_of[i]
      end
    end
    reply[#reply + 1] = value
    reply[#reply + 1] = deliveries > 0 and deliveries * 10 + levels[i] or deliveries * 10
    if due then extra(out, 'd', due) end
    if job then extra(out, 'j', job) end
    local headed = headers[i] and delayq_section_headers(headers[i])
    if headed then extra(out, 'h', string.sub(headed, 7)) end
  end
end
reply[3] = out
if room then
  reply[4] = room - #leases / 2
end
for _, extra in ipairs(extras) do
  reply[#reply + 1] = extra
end
if #leases > 0 then
  redis.call('zadd', KEYS[2], unpack(leases))
end
if #group_leases > 0 then
  delayq_call_chunked('hset', grouped.state, group_leases)
end
if #ttls > 0 and KEYS[18] then
  redis.call('hset', KEYS[18], unpack(ttls))
end
if more then
  reply[1] = 'more'
end
delayq_expiry_close(expiry, events, KEYS[10], KEYS[11])
if jobs then delayq_jobs_flush(jobs) end
if #ended > 0 then
  delayq_batches_ended(delayq_batches_open(19, events, KEYS[10]), ended, nil, now, hows)
end
if #claimed > 0 then
  if #claimed_jobs > 0 then
    delayq_event(events, KEYS[10], 'claimed', 'count', #claimed, 'deliveries', delayq_event_ids(claimed), 'jobs', cjson.encode(claimed_jobs))
  else
    delayq_event(events, KEYS[10], 'claimed', 'count', #claimed, 'deliveries', delayq_event_ids(claimed))
  end
end
if #dead > 0 then
  local reason = 'delivered ' .. dead[1] .. ' times without an ack (max_deliveries ' .. max .. ')'
  if #dead_jobs > 0 then
    delayq_event(events, KEYS[10], 'dead_lettered', 'count', #dead, 'reason', reason, 'jobs', cjson.encode(dead_jobs))
  else
    delayq_event(events, KEYS[10], 'dead_lettered', 'count', #dead, 'reason', reason)
  end
end
delayq_count(KEYS[11], 'dead_lettered', #dead)
if #cancelled > 0 then
  local named = {}
  for i = 1, math.min(#cancelled, DELAYQ_EVENT_IDS) do named[i] = cancelled[i] end
  delayq_event(events, KEYS[10], 'job_cancelled', 'count', #cancelled, 'running', 0, 'jobs', cjson.encode(named))
  delayq_count(KEYS[11], 'cancelled', #cancelled)
end
return reply
