-- LIBS: element offer request ids events limits traces
-- offer_id: offer one element under an id (DelayedQueue::offer_with_id,
-- replace_with_id).
-- KEYS: 1 timeout set, 2 pending list, 3 channel, 4 id index, 5 events
--       config, 6 events stream (lib/events.lua: 'offered' with the id when
--       it offers, 'refused' when the limits refuse it), 7 stats hash (the
--       'offered' total; a refusal counts none), 8 limits hash
--       (lib/limits.lua), 9 destination list (counted by 'max_size'); only
--       with a trace context (feature `opentelemetry`): 10 trace records,
--       11 trace expiry; last, 12 request key (KEYS[10] without the trace
--       keys; lib/request.lua: a resend returns the first run's answer;
--       src/connection/request.rs appends it)
-- ARGV: 1 id, 2 payload, 3 format ('modern' | 'legacy'), 4 due (ms since the
--       epoch, or "+delay_ms" from the Redis server's clock), 5 'keep' | 'replace',
--       6 only with the trace keys: the W3C trace context, stored for the
--       element when one is offered (lib/traces.lua)
-- Returns 1 when no element with this id was pending (it is offered), else 0:
-- with 'keep' nothing changes; with 'replace' the pending element is removed
-- and the new one offered in its place (new value, new due time, at the end
-- of the pending list). An offer that would add an element is checked
-- against the queue's limits first (lib/limits.lua: a replacement does not
-- grow the queue); a refusal changes nothing, stores no answer (a resend
-- checks again) and is the error reply lib/limits.lua names.
--
-- The element is offered as any offer (lib/offer.lua), with its id bytes
-- taken from the id (lib/ids.lua).
local request = KEYS[#KEYS]
local trace = KEYS[12] and ARGV[6]
local replayed = delayq_replayed(request)
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'list', KEYS[4], 'hash')
if bad then return bad end
local events, events_bad = delayq_events_open(KEYS[5], KEYS[6])
if events_bad then return events_bad end
bad = trace and delayq_check_types(KEYS[10], 'hash', KEYS[11], 'zset')
if bad then return bad end
local limits, limits_bad = delayq_limits_open(KEYS[8])
if limits_bad then return limits_bad end
local id, payload, format, due, mode = ARGV[1], ARGV[2], ARGV[3], delayq_due(ARGV[4]), ARGV[5]
local field = delayq_id_bytes(format, id)
local element = delayq_pack(format, field, payload)
local old = delayq_id_find(KEYS[4], KEYS[1], id)
if not old and redis.call('zscore', KEYS[1], element) then
  old = element -- pending already but not indexed (its entry was lost)
end
if limits and not (old and mode == 'keep') then
  -- A replacement takes its old element's place: room for one more is
  -- needed only when none is pending.
  local admitted, refusal = delayq_admit(limits, KEYS[1], KEYS[9], {element})
  if admitted == 0 and old and string.find(refusal, 'max_size', 1, true) then
    admitted = 1
  end
  if admitted == 0 then
    delayq_event(events, KEYS[6], 'refused', 'count', 1, 'id', id, 'reason', delayq_refusal_reason(refusal))
    return redis.error_reply(refusal)
  end
end
if old then
  if mode == 'keep' then
    redis.call('hset', KEYS[4], delayq_element_id(old), delayq_id_entry(id, old))
    return delayq_answer(request, 0)
  end
  redis.call('zrem', KEYS[1], old)
  delayq_pending_remove(KEYS[2], old)
  redis.call('hdel', KEYS[4], delayq_element_id(old))
end
delayq_offer(KEYS[1], KEYS[2], KEYS[3], {due}, {element})
redis.call('hset', KEYS[4], field, delayq_id_entry(id, element))
delayq_ids_sample(KEYS[4], KEYS[1])
delayq_event(events, KEYS[6], 'offered', 'count', 1, 'id', id)
delayq_count(KEYS[7], 'offered', 1)
if trace then
  delayq_traces_put(KEYS[10], KEYS[11], trace, {payload}, {due})
end
return delayq_answer(request, old and 0 or 1)
