-- LIBS: element events priority
-- pop_priority: pop the first value of a queue that has priorities
-- (lib/priority.lua): due delayed priority values move to the ready set
-- first (a bounded number), then the ready set's first (highest level,
-- earliest), else the destination list's head (the default level). An
-- expired value (message TTL) is not popped: it goes to the dead letters
-- with reason 'expired', or is dropped, and the pop goes on to the next
-- (at most DELAYQ_PRIORITY_EXPIRE_MAX of them a call).
-- KEYS: 1 priority ready set, 2 priority delayed set, 3 priority marker,
--       4 destination list, 5 dead-letter list, 6 dead-letter reasons
--       (list), 7 events config, 8 events stream (lib/events.lua: one
--       'expired' event per call that expires any), 9 stats hash (the
--       'expired' and 'dead_lettered' totals); without 5-9 (a run by hand
--       with older keys) nothing expires
-- ARGV: none
-- Returns {value or false, its level (0: the list's), when the delayed set's
-- next value is due (ms) or false, its section (lib/priority.lua: TTL
-- header, headers) or false, 1 when it
-- skipped as many expired values as a call may and popped nothing (call
-- again: the list's values go after the ready set's) else 0}.
--
-- Sent once, as an LPOP is: a second run would pop another value.
-- Cost: O(log n), and at most DELAYQ_PRIORITY_MOVE values moved and
-- DELAYQ_PRIORITY_EXPIRE_MAX expired.
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'zset', KEYS[4], 'list')
if bad then return bad end
if KEYS[5] then
  bad = delayq_check_types(KEYS[5], 'list', KEYS[6], 'list')
  if bad then return bad end
end
local events, events_bad = delayq_events_open(KEYS[7], KEYS[8])
if events_bad then return events_bad end
local now = delayq_server_ms()
delayq_priority_due(KEYS[1], KEYS[2], KEYS[3], now)
local expiry = delayq_expiry_open(KEYS[5], KEYS[6], now)
local reply
-- Members not ours moved aside this call: bounded as expired ones are.
local foreign = 0
while not delayq_expiry_full(expiry) and foreign < DELAYQ_PRIORITY_EXPIRE_MAX do
  local top = redis.call('zpopmin', KEYS[1])
  local member = top[1]
  if not member then break end
  local level, header, element = delayq_priority_parse(member)
  local payload = level and delayq_payload(element)
  if not payload and KEYS[5] then
    -- Not one of ours (written by hand): kept where an operator sees it,
    -- as claim_batch.lua does, and the pop goes on.
    delayq_dead_letter(KEYS[5], KEYS[6], member, 'not a priority entry: moved from ' .. KEYS[1])
    foreign = foreign + 1
  elseif not payload then
    -- A run by hand without the dead-letter keys: refused, put back.
    redis.call('zadd', KEYS[1], top[2], member)
    delayq_expiry_close(expiry, events, KEYS[8], KEYS[9])
    return redis.error_reply('DELAYQ_MALFORMED ' .. KEYS[1] .. ' holds a member that is not a priority entry')
  elseif not delayq_expiry_take(expiry, header, payload) then
    reply = {payload, level, delayq_priority_next_due(KEYS[2]), header or false, 0}
    break
  end
end
delayq_expiry_close(expiry, events, KEYS[8], KEYS[9])
if reply then return reply end
if delayq_expiry_full(expiry) or foreign >= DELAYQ_PRIORITY_EXPIRE_MAX then
  -- The list's values go after the ready set's: none of them yet.
  return {false, 0, delayq_priority_next_due(KEYS[2]), false, 1}
end
return {redis.call('lpop', KEYS[4]) or false, 0, delayq_priority_next_due(KEYS[2]), false, 0}
