-- LIBS: element offer request ids jobs events batches limits
-- offer_batch: one chunk of a batch's offer (DelayedQueue::offer_batch):
-- its members offered as jobs under the ids <batch>/<index> (from 1), as
-- offer_with_id offers (lib/ids.lua), and counted into the batch's record
-- (lib/batches.lua).
-- KEYS: 1 timeout set, 2 pending list, 3 channel, 4 id index, 5 batch
--       records, 6 batch outbox, 7 batch expiry, 8 job records (the queue
--       must keep job history: members are counted as their jobs end), 9
--       events config, 10 events stream (lib/events.lua: 'offered' with
--       the count a run adds and the batch, 'refused' when the limits stop
--       it, 'batch_completed'), 11 stats hash (the 'offered' total), 12
--       limits hash (lib/limits.lua), 13 destination list (counted by
--       'max_size')
-- ARGV: 1 batch id, 2 index (0-based) of the chunk's first member, 3 the
--       batch's total, 4 how long its record is kept once delivered (ms), 5
--       the completion's target queue ('' for none), 6 the completion's data
--       (JSON; '' for none), 7 format ('modern' | 'legacy'), then due_1,
--       payload_1, due_2, payload_2, ... (a due time is ms since the epoch,
--       or "+delay_ms" from the server's clock)
-- Returns {the members offered after this run, the refusal or false}.
--
-- The record is the resend guard, as offer_all's count is: a chunk adds its
-- members from the record's count on, and only once the count has reached
-- its first one, so a resent chunk adds nothing twice and an early one
-- nothing at all. The first chunk makes the record ('offering'); the one
-- that offers the last member opens it, and from then on it can complete.
-- A batch id in use by another batch (another total or target) is refused.
-- When the limits refuse a member, the members before it are added and
-- counted, the batch stays 'offering', and the refusal is answered: an
-- offer of the same batch id resumes from its count.
-- Cost: O(k log n) for the k members of the chunk.
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'list', KEYS[4], 'hash', KEYS[5], 'hash', KEYS[6], 'zset', KEYS[7], 'zset')
if bad then return bad end
bad = delayq_check_types(KEYS[8], 'hash')
if bad then return bad end
if not delayq_jobs_on(KEYS[8]) then
  return redis.error_reply('DELAYQ_BATCH_HISTORY a batch needs the queue\'s job history (set_job_history): its members are counted as their jobs end')
end
-- Members without a record are never counted: refused while the job
-- history cannot hold the whole batch (lib/jobs.lua's cap).
if tonumber(ARGV[2]) == 0 and redis.call('hlen', KEYS[8]) + 2 * tonumber(ARGV[3]) > DELAYQ_JOBS_CAP then
  return redis.error_reply('DELAYQ_BATCH_FULL the job history holds too many records for a batch of ' .. ARGV[3])
end
local events, events_bad = delayq_events_open(KEYS[9], KEYS[10])
if events_bad then return events_bad end
local limits, limits_bad = delayq_limits_open(KEYS[12])
if limits_bad then return limits_bad end
local bid, first, total, keep, target, data, format = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5], ARGV[6], ARGV[7]
local now = delayq_server_ms()
local raw = redis.call('hget', KEYS[5], 'b:' .. bid)
local r = delayq_batches_parse(raw)
if raw and not r then
  return redis.error_reply('DELAYQ_BATCH_BAD the record of batch ' .. bid .. ' does not read')
end
if not r then
  if first ~= 0 then
    return redis.error_reply('DELAYQ_BATCH_GONE batch ' .. bid .. ' has no record (it expired or was deleted)')
  end
  r = {s = 'offering', total = total, offered = 0, h = 0, d = 0, c = 0, created = string.format('%.0f', now),
    completed = '0', keep = keep, format = format, target = target}
  if data ~= '' then redis.call('hset', KEYS[5], 'd:' .. bid, data) end
elseif r.total ~= total or r.target ~= target then
  return redis.error_reply('DELAYQ_BATCH_TAKEN batch id ' .. bid .. ' is in use by another batch')
end
-- All offered already (a resent last chunk), or an early chunk.
if r.s ~= 'offering' or first > r.offered then
  return {r.offered, false}
end
local n = (#ARGV - 7) / 2
local dues, elements, ids, fields = {}, {}, {}, {}
for i = r.offered - first + 1, n do
  local id = bid .. '/' .. (first + i)
  local field = delayq_id_bytes(format, id)
  ids[#ids + 1] = id
  fields[#fields + 1] = field
  dues[#dues + 1] = delayq_due(ARGV[6 + 2 * i])
  elements[#elements + 1] = delayq_pack(format, field, ARGV[7 + 2 * i])
end
local refusal = false
if limits and #elements > 0 then
  local admitted, refused = delayq_admit(limits, KEYS[1], KEYS[13], elements)
  if refused then
    refusal = refused
    for i = #elements, admitted + 1, -1 do
      elements[i], dues[i], ids[i], fields[i] = nil, nil, nil, nil
    end
  end
end
if #elements > 0 then
  delayq_offer(KEYS[1], KEYS[2], KEYS[3], dues, elements)
  local index, members, expiring = {}, {}, {}
  local member_until = tonumber(r.created) + DELAYQ_BATCH_MEMBER_TTL
  for i, id in ipairs(ids) do
    index[#index + 1] = fields[i]
    index[#index + 1] = delayq_id_entry(id, elements[i])
    members[#members + 1] = 'm:' .. id
    members[#members + 1] = bid
    expiring[#expiring + 1] = member_until
    expiring[#expiring + 1] = 'm:' .. id
  end
  delayq_call_chunked('hset', KEYS[4], index)
  delayq_call_chunked('hset', KEYS[5], members)
  delayq_call_chunked('zadd', KEYS[7], expiring)
  r.offered = r.offered + #elements
  delayq_event(events, KEYS[10], 'offered', 'count', #elements, 'batch', bid)
  delayq_count(KEYS[11], 'offered', #elements)
end
if r.offered >= r.total then
  r.s = 'open'
  -- Every member may have ended already (fast consumers of early chunks).
  delayq_batches_complete_if_done({hash = KEYS[5], outbox = KEYS[6], expiry = KEYS[7], events = events, stream = KEYS[10]}, bid, r, now)
end
redis.call('hset', KEYS[5], 'b:' .. bid, delayq_batches_text(r))
delayq_batches_reap(KEYS[5], KEYS[7], now, #elements)
if refusal then
  delayq_event(events, KEYS[10], 'refused', 'count', n - (r.offered - first), 'reason', delayq_refusal_reason(refusal))
  return {r.offered, refusal}
end
return {r.offered, false}
