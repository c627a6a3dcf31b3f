-- LIBS: element offer request events limits groups
-- offer_grouped: offer a value with a group key (OfferOptions::group): due
-- now, to its key's tail (lib/groups.lua), the key put in the ring if it
-- may run; later, to the delayed set, moved to its key's tail by the
-- claim that finds it due.
-- KEYS: 1 group values, 2 group delayed, 3 group ring, 4 group blocked,
--       5 group state, 6 timeout set, 7 destination list (with 6 and the
--       group sets, what 'max_size' counts), 8 limits hash (lib/limits.lua),
--       9 events config, 10 events stream (lib/events.lua: 'offered' with
--       the group, or 'refused'), 11 stats hash (the 'offered' total), 12
--       request key (lib/request.lua: a resend gets the first run's answer
--       and adds nothing)
-- ARGV: 1 the group key, 2 due (ms since the epoch, or "+delay_ms" from the
--       server's clock), 3 payload, 4 8 random bytes (for the limits'
--       count of its packed size)
-- Returns 1. A refusal of the queue's limits changes nothing, stores no
-- answer (a resend checks again) and is the error reply lib/limits.lua
-- names. Cost: O(log n).
local request = KEYS[12]
local replayed = delayq_replayed(request)
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'zset', KEYS[3], 'zset', KEYS[4], 'zset', KEYS[5], 'hash', KEYS[6], 'zset', KEYS[7], 'list')
if bad then return bad end
local events, events_bad = delayq_events_open(KEYS[9], KEYS[10])
if events_bad then return events_bad end
local limits, limits_bad = delayq_limits_open(KEYS[8])
if limits_bad then return limits_bad end
local key, payload, unique = ARGV[1], ARGV[3], ARGV[4]
local admitted, refusal = delayq_admit(limits, KEYS[6], KEYS[7], {delayq_pack('modern', unique, payload)}, {KEYS[1], KEYS[2]})
if admitted == 0 then
  delayq_event(events, KEYS[10], 'refused', 'count', 1, 'reason', delayq_refusal_reason(refusal))
  return redis.error_reply(refusal)
end
local now = delayq_server_ms()
local due = tonumber(delayq_due(ARGV[2]))
local g = {values = KEYS[1], delayed = KEYS[2], ring = KEYS[3], blocked = KEYS[4], state = KEYS[5]}
-- The state marks the queue as having groups (its consumers look then).
redis.call('hsetnx', KEYS[5], 'turn', 0)
-- Its place in its key's line is taken now: values due later keep their
-- offer order when they join it.
local member = delayq_group_prefix(key) .. delayq_group_next_seq(g) .. payload
if due <= now then
  redis.call('zadd', KEYS[1], 0, member)
  delayq_group_runnable(g, key)
else
  redis.call('zadd', KEYS[2], due, member)
end
delayq_event(events, KEYS[10], 'offered', 'count', 1, 'group', key)
delayq_count(KEYS[11], 'offered', 1)
return delayq_answer(request, 1)
